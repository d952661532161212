use hermes_protocol::{Message, Role, ToolCall};

use super::super::test_support::{at, calling, seed, session, temp_db};
use super::super::{DbError, MessageExtra};
use super::content_text;

#[test]
fn append_stores_like_the_reference_and_bumps_counters() {
    let (_d, mut db) = temp_db();
    db.create_session(&session("s", 1.0)).unwrap();
    let u = db
        .append_message("s", &Message::user("hi"), &at(2.0))
        .unwrap();
    let extra = MessageExtra {
        timestamp: 3.0,
        token_count: Some(42),
        finish_reason: Some("tool_calls".into()),
    };
    let mut a = calling(2);
    a.reasoning = Some("thinking…".into());
    let a_id = db.append_message("s", &a, &extra).unwrap();
    let t = db
        .append_message(
            "s",
            &Message::tool_result("call_0", "read_file", "contents"),
            &at(4.0),
        )
        .unwrap();
    assert!(u < a_id && a_id < t);

    let row = db.get_session("s").unwrap().unwrap();
    assert_eq!(row.message_count, 3);
    assert_eq!(row.tool_call_count, 2);

    let msgs = db.messages("s").unwrap();
    assert_eq!(msgs.len(), 3);
    let m = &msgs[1];
    assert_eq!(m.role, "assistant");
    assert_eq!(m.content, None);
    assert_eq!(m.token_count, Some(42));
    assert_eq!(m.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(m.reasoning.as_deref(), Some("thinking…"));
    assert_eq!(m.timestamp, 3.0);
    // Python json.dumps formatting, so the reference reads (and indexes) identical text.
    assert_eq!(
        m.tool_calls.as_deref(),
        Some(
            "[{\"id\": \"call_0\", \"type\": \"function\", \"function\": {\"name\": \"read_file\", \
             \"arguments\": \"{\\\"path\\\": \\\"f0.rs\\\"}\"}}, {\"id\": \"call_1\", \"type\": \
             \"function\", \"function\": {\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \
             \\\"f1.rs\\\"}\"}}]"
        )
    );
    assert_eq!(msgs[2].tool_name.as_deref(), Some("read_file"));
    assert_eq!(msgs[2].tool_call_id.as_deref(), Some("call_0"));
    let (active, observed): (i64, i64) = db
        .conn
        .query_row(
            "SELECT active, observed FROM messages WHERE id = ?1",
            [t],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((active, observed), (1, 0));
}

#[test]
fn append_to_missing_session_is_a_clear_error() {
    let (_d, mut db) = temp_db();
    let err = db
        .append_message("ghost", &Message::user("boo"), &at(1.0))
        .unwrap_err();
    assert!(
        matches!(&err, DbError::NoSuchSession(id) if id == "ghost"),
        "{err}"
    );
}

#[test]
fn conversation_round_trips_protocol_messages() {
    let (_d, mut db) = temp_db();
    db.create_session(&session("s", 1.0)).unwrap();
    let mut call = Message::assistant("let me look");
    call.tool_calls = vec![ToolCall::new("c1", "read_file", "{\"path\": \"日本.rs\"}")];
    call.reasoning = Some("need the file".into());
    let sent = vec![
        Message::system("be nice"),
        Message::user("read it"),
        call,
        Message::tool_result("c1", "read_file", "fn main() {}"),
        Message::assistant("done"),
    ];
    for (i, m) in sent.iter().enumerate() {
        db.append_message("s", m, &at(10.0 + i as f64)).unwrap();
    }
    assert_eq!(db.conversation("s").unwrap(), sent);
}

#[test]
fn conversation_scrubs_memory_context_and_review_harness() {
    let (_d, mut db) = temp_db();
    seed(
        &mut db,
        "s",
        1.0,
        &[
            "  <memory-context>secret recall</memory-context> real question ",
            "answer",
            "Review the conversation above and update the skill library now",
            "curator reply",
            "next question",
        ],
    );
    let conv = db.conversation("s").unwrap();
    let texts: Vec<&str> = conv.iter().map(|m| m.text()).collect();
    assert_eq!(texts, vec!["real question", "answer", "next question"]);
}

#[test]
fn conversation_tolerates_old_rows() {
    let (_d, mut db) = temp_db();
    db.create_session(&session("s", 1.0)).unwrap();
    let c = &db.conn;
    let ins = "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES ('s', ?1, ?2, ?3, 1)";
    c.execute(ins, rusqlite::params!["assistant", "bad calls", "not json"])
        .unwrap();
    c.execute(
        ins,
        rusqlite::params!["session_meta", "ignored", None::<String>],
    )
    .unwrap();
    let multimodal =
        "\u{0}json:[{\"type\": \"text\", \"text\": \"look\"}, {\"type\": \"image_url\"}]";
    c.execute(ins, rusqlite::params!["user", multimodal, None::<String>])
        .unwrap();
    let conv = db.conversation("s").unwrap();
    assert_eq!(conv.len(), 2);
    assert!(conv[0].tool_calls.is_empty());
    assert_eq!(conv[1].role, Role::User);
    assert_eq!(conv[1].text(), "look");
}

#[test]
fn inactive_messages_are_not_loaded() {
    let (_d, mut db) = temp_db();
    let ids = seed(&mut db, "s", 1.0, &["a", "b", "c"]);
    db.conn
        .execute("UPDATE messages SET active = 0 WHERE id = ?1", [ids[1]])
        .unwrap();
    assert_eq!(db.messages("s").unwrap().len(), 2);
    assert_eq!(db.conversation("s").unwrap().len(), 2);
    assert_eq!(
        db.message_count(Some("s")).unwrap(),
        3,
        "counts every row, like the reference"
    );
}

#[test]
fn rewinding_hides_the_last_active_rows_of_that_session_only() {
    let (_d, mut db) = temp_db();
    seed(&mut db, "s", 1.0, &["a", "b", "c", "d"]);
    seed(&mut db, "other", 100.0, &["x"]);
    assert_eq!(db.deactivate_last_messages("s", 2).unwrap(), 2);
    let left: Vec<String> = db
        .messages("s")
        .unwrap()
        .into_iter()
        .filter_map(|m| m.content)
        .collect();
    assert_eq!(left, vec!["a", "b"]);
    // Already-hidden rows are skipped: the next rewind takes the next active ones.
    assert_eq!(db.deactivate_last_messages("s", 1).unwrap(), 1);
    assert_eq!(db.messages("s").unwrap().len(), 1);
    assert_eq!(db.messages("other").unwrap().len(), 1);
    assert_eq!(db.message_count(Some("s")).unwrap(), 4, "rows stay on disk");
}

#[test]
fn messages_around_windows() {
    let (_d, mut db) = temp_db();
    let ids = seed(&mut db, "s", 1.0, &["0", "1", "2", "3", "4", "5", "6"]);
    seed(&mut db, "other", 100.0, &["x"]);
    let w: Vec<i64> = db
        .messages_around("s", ids[3], 2)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(w, ids[1..6].to_vec());
    let w: Vec<i64> = db
        .messages_around("s", ids[0], 2)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(w, ids[0..3].to_vec());
    let w: Vec<i64> = db
        .messages_around("s", ids[6], 0)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(w, vec![ids[6]]);
    assert!(db.messages_around("other", ids[3], 2).unwrap().is_empty());
    assert!(db.messages_around("s", 999_999, 2).unwrap().is_empty());
}

#[test]
fn message_count_overall_and_per_session() {
    let (_d, mut db) = temp_db();
    seed(&mut db, "a", 1.0, &["1", "2"]);
    seed(&mut db, "b", 2.0, &["3"]);
    assert_eq!(db.message_count(None).unwrap(), 3);
    assert_eq!(db.message_count(Some("a")).unwrap(), 2);
    assert_eq!(db.message_count(Some("zzz")).unwrap(), 0);
}

#[test]
fn content_text_decodes_structured_content() {
    assert_eq!(content_text("plain"), "plain");
    assert_eq!(
        content_text(
            "\u{0}json:[{\"type\": \"text\", \"text\": \"a\"}, {\"type\": \"text\", \"text\": \"b\"}]"
        ),
        "a\nb"
    );
    assert_eq!(
        content_text("\u{0}json:[{\"type\": \"image_url\"}]"),
        "[multimodal content]"
    );
    assert_eq!(content_text("\u{0}json:{broken"), "\u{0}json:{broken");
}

#[test]
fn reasoning_items_and_thinking_signature_survive_a_round_trip() {
    let (_d, mut db) = temp_db();
    db.create_session(&session("s", 1.0)).unwrap();
    let items = vec![serde_json::json!({
        "type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-enc",
        "summary": [{"type": "summary_text", "text": "plan"}],
    })];
    let mut codex = calling(1);
    codex.codex_reasoning_items = items.clone();
    let mut claude = Message::assistant("answer");
    claude.reasoning = Some("let me think".into());
    claude.reasoning_signature = Some("sig-abc".into());
    db.append_message("s", &Message::user("hi"), &at(2.0))
        .unwrap();
    db.append_message("s", &codex, &at(3.0)).unwrap();
    db.append_message("s", &claude, &at(4.0)).unwrap();

    // Stored where and how the reference stores them.
    let (details, stored_items): (Option<String>, Option<String>) = db
        .conn
        .query_row(
            "SELECT reasoning_details, codex_reasoning_items FROM messages WHERE id = 2",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(details, None);
    let parsed: serde_json::Value = serde_json::from_str(&stored_items.unwrap()).unwrap();
    assert_eq!(parsed, serde_json::Value::Array(items.clone()));
    let details: String = db
        .conn
        .query_row(
            "SELECT reasoning_details FROM messages WHERE id = 3",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let details: serde_json::Value = serde_json::from_str(&details).unwrap();
    assert_eq!(details[0]["type"], "thinking");
    assert_eq!(details[0]["signature"], "sig-abc");

    let conv = db.conversation("s").unwrap();
    assert_eq!(
        conv[0].codex_reasoning_items,
        Vec::<serde_json::Value>::new()
    );
    assert_eq!(conv[1].codex_reasoning_items, items);
    assert_eq!(conv[1].reasoning_signature, None);
    assert_eq!(conv[2].reasoning.as_deref(), Some("let me think"));
    assert_eq!(conv[2].reasoning_signature.as_deref(), Some("sig-abc"));
    assert!(conv[2].codex_reasoning_items.is_empty());
}

#[test]
fn several_thinking_blocks_are_not_replayed_with_one_signature() {
    let (_d, mut db) = temp_db();
    db.create_session(&session("s", 1.0)).unwrap();
    db.append_message("s", &Message::assistant("a"), &at(2.0))
        .unwrap();
    db.conn
        .execute(
            "UPDATE messages SET reasoning = 'x', reasoning_details = ?1",
            [r#"[{"type":"thinking","thinking":"a","signature":"s1"},
                 {"type":"thinking","thinking":"b","signature":"s2"}]"#],
        )
        .unwrap();
    let conv = db.conversation("s").unwrap();
    assert_eq!(conv[0].reasoning.as_deref(), Some("x"));
    assert_eq!(conv[0].reasoning_signature, None);
}
