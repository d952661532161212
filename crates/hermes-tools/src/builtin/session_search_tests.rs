use hermes_protocol::{Message, ToolCall};
use hermes_state::session_db::{MessageExtra, NewSession, SessionDb};
use serde_json::{Value, json};

use super::*;

/// (session id, start time, [(role, text)]).
type SeedSession = (&'static str, f64, &'static [(&'static str, &'static str)]);

fn seed(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("state.db");
    let mut db = SessionDb::open(&path).unwrap();
    let sessions: [SeedSession; 3] = [
        (
            "20260101_000000_aaaaaa",
            1_767_225_600.0,
            &[
                ("user", "Please fix the Telegram gateway reconnect bug"),
                (
                    "assistant",
                    "I patched the reconnect backoff in the gateway.",
                ),
            ],
        ),
        (
            "20260201_000000_bbbbbb",
            1_769_904_000.0,
            &[
                ("user", "Plan the docker networking migration"),
                (
                    "assistant",
                    "We chose bridge networking with a custom subnet.",
                ),
            ],
        ),
        (
            "20260301_000000_cccccc",
            1_772_323_200.0,
            &[
                ("user", "current session talking about telegram too"),
                ("assistant", "ok"),
            ],
        ),
    ];
    for (id, t, msgs) in sessions {
        db.create_session(&NewSession {
            id: id.into(),
            source: "cli".into(),
            model: Some("m".into()),
            started_at: t,
            ..NewSession::default()
        })
        .unwrap();
        for (i, (role, text)) in msgs.iter().enumerate() {
            let m = if *role == "user" {
                Message::user(*text)
            } else {
                Message::assistant(*text)
            };
            db.append_message(
                id,
                &m,
                &MessageExtra {
                    timestamp: t + i as f64,
                    ..MessageExtra::default()
                },
            )
            .unwrap();
        }
    }
    let mut call = Message::assistant("");
    call.content = None;
    call.tool_calls = vec![ToolCall::new(
        "c1",
        "terminal",
        r#"{"command":"docker network ls"}"#,
    )];
    db.append_message(
        "20260201_000000_bbbbbb",
        &call,
        &MessageExtra {
            timestamp: 1_769_904_010.0,
            ..MessageExtra::default()
        },
    )
    .unwrap();
    db.append_message(
        "20260201_000000_bbbbbb",
        &Message::tool_result("c1", "terminal", "bridge host none"),
        &MessageExtra {
            timestamp: 1_769_904_011.0,
            ..MessageExtra::default()
        },
    )
    .unwrap();
    db.close().unwrap();
    path
}

async fn call(path: &std::path::Path, args: Value) -> Result<Value, ToolError> {
    let ctx = ToolContext::new("/", "20260301_000000_cccccc");
    let out = SessionSearchTool::new(path).call(args, &ctx).await?;
    Ok(serde_json::from_str(&out).unwrap())
}

#[tokio::test]
async fn discover_finds_other_sessions_with_context_and_skips_the_current_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = seed(dir.path());
    let out = call(&path, json!({"query": "telegram"})).await.unwrap();
    assert_eq!(out["mode"], "discover");
    assert_eq!(out["count"], 1, "{out:#}");
    let hit = &out["results"][0];
    assert_eq!(hit["session_id"], "20260101_000000_aaaaaa");
    assert_eq!(hit["matched_role"], "user");
    assert_eq!(hit["bookend_start"].as_array().unwrap().len(), 2);
    assert!(
        hit["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["anchor"] == true)
    );
    assert!(hit["when"].as_str().unwrap().contains("2026"));
}

#[tokio::test]
async fn role_filter_reaches_tool_output_and_substrings_match() {
    let dir = tempfile::tempdir().unwrap();
    let path = seed(dir.path());
    let none = call(&path, json!({"query": "bridge host"})).await.unwrap();
    assert!(
        none["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["matched_role"] != "tool")
    );
    let tool = call(
        &path,
        json!({"query": "bridge host", "role_filter": "tool"}),
    )
    .await
    .unwrap();
    assert_eq!(tool["results"][0]["matched_role"], "tool", "{tool:#}");
    let sub = call(&path, json!({"query": "egra"})).await.unwrap();
    assert_eq!(sub["count"], 1, "trigram substring match: {sub:#}");
}

#[tokio::test]
async fn read_scroll_and_browse_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let path = seed(dir.path());
    let read = call(&path, json!({"session_id": "20260201_000000_bbbbbb"}))
        .await
        .unwrap();
    assert_eq!(read["mode"], "read");
    assert_eq!(read["message_count"], 4);
    let first = read["messages"][0]["id"].as_i64().unwrap();
    let scroll = call(
        &path,
        json!({"session_id": "20260201_000000_bbbbbb", "around_message_id": first, "window": 1}),
    )
    .await
    .unwrap();
    assert_eq!(scroll["mode"], "scroll");
    assert_eq!(scroll["messages_before"], 0);
    assert_eq!(scroll["messages_after"], 1);
    let browse = call(&path, json!({})).await.unwrap();
    assert_eq!(browse["mode"], "browse");
    let ids: Vec<&str> = browse["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["session_id"].as_str().unwrap())
        .collect();
    assert!(
        !ids.contains(&"20260301_000000_cccccc"),
        "the current session is skipped"
    );
    assert_eq!(ids.len(), 2);
}

#[tokio::test]
async fn bad_ids_and_hostile_queries_give_clean_answers() {
    let dir = tempfile::tempdir().unwrap();
    let path = seed(dir.path());
    let err = call(&path, json!({"session_id": "nope"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("session_id not found"), "{err}");
    for q in [
        "\"unbalanced",
        "AND OR NOT",
        "'; DROP TABLE messages; --",
        "a\u{0}b",
        &"x".repeat(10_000),
        "NEAR(",
        "content:",
    ] {
        match call(&path, json!({"query": q})).await {
            Ok(v) => assert_eq!(v["success"], true, "{q}"),
            Err(ToolError::Model(msg)) => assert!(
                !msg.to_lowercase().contains("syntax error near"),
                "{q}: {msg}"
            ),
            Err(e) => panic!("{q}: {e}"),
        }
    }
    // The store is intact afterwards.
    let read = call(&path, json!({"session_id": "20260101_000000_aaaaaa"}))
        .await
        .unwrap();
    assert_eq!(read["message_count"], 2);
}
