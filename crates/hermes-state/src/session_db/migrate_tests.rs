use std::collections::BTreeSet;
use std::path::Path;

use hermes_protocol::Message;
use rusqlite::Connection;

use super::super::test_support::at;
use super::super::{SearchQuery, SessionDb};

/// Schema version 11 as hermes-agent shipped it (no FTS tables in this file yet).
const V11_SCHEMA: &str = include_str!("../../tests/fixtures/legacy_v11_schema.sql");
/// The pre-v11 external-content FTS table (seed docs: `fts5(content, content=messages)`).
const V10_FTS: &str = include_str!("../../tests/fixtures/legacy_v10_fts.sql");
/// Sample sessions and messages.
const LEGACY_ROWS: &str = include_str!("../../tests/fixtures/legacy_rows.sql");

fn legacy_rows(c: &Connection) {
    c.execute_batch(LEGACY_ROWS).unwrap();
}

fn objects(c: &Connection) -> BTreeSet<(String, String)> {
    c.prepare("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn columns(c: &Connection, table: &str) -> Vec<String> {
    c.prepare("SELECT name FROM pragma_table_info(?1)")
        .unwrap()
        .query_map([table], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn assert_current_shape(path: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let fresh = SessionDb::open(&dir.path().join("fresh.db")).unwrap();
    let db = SessionDb::open(path).unwrap();
    assert_eq!(objects(&db.conn), objects(&fresh.conn));
    for (table, _) in super::expected_columns().unwrap() {
        let mut got = columns(&db.conn, &table);
        let mut want = columns(&fresh.conn, &table);
        got.sort();
        want.sort();
        assert_eq!(got, want, "columns of {table}");
    }
    let v: i64 = db
        .conn
        .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 22);
}

fn assert_legacy_data(db: &SessionDb) {
    let old = db.get_session("old1").unwrap().unwrap();
    assert_eq!(
        (old.title.as_deref(), old.input_tokens, old.message_count),
        (Some("Old chat"), 500, 3)
    );
    assert!(!old.archived);
    assert_eq!(
        db.messages("old1").unwrap().len(),
        3,
        "NULL-active legacy rows are visible"
    );
    let conv = db.conversation("old1").unwrap();
    assert_eq!(conv[1].tool_calls[0].function.name, "web_search");
    assert_eq!(conv[2].name.as_deref(), Some("web_search"));
    assert_eq!(db.search(&SearchQuery::new("zeppelins")).unwrap().len(), 1);
    assert_eq!(
        db.search(&SearchQuery::new("web_search")).unwrap().len(),
        2,
        "tool names indexed"
    );
    assert_eq!(
        db.search(&SearchQuery::new("egra")).unwrap().len(),
        1,
        "trigram backfilled"
    );
    assert_eq!(db.search(&SearchQuery::new("日本語")).unwrap().len(), 1);
}

#[test]
fn schema_11_file_is_upgraded_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(V11_SCHEMA).unwrap();
        legacy_rows(&c);
    }
    assert_current_shape(&path);
    let mut db = SessionDb::open(&path).unwrap();
    assert_legacy_data(&db);

    // v20 seeded per-model usage from the aggregate counters.
    let (model, input): (String, i64) = db
        .conn
        .query_row(
            "SELECT model, input_tokens FROM session_model_usage WHERE session_id = 'old1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((model.as_str(), input), ("gpt-4", 500));
    // v16 tagged the untitled tool-only child as a delegate subagent.
    let sub = db.get_session("sub").unwrap().unwrap();
    assert_eq!(
        sub.model_config.as_deref(),
        Some("{\"_delegate_from\":\"old2\"}")
    );

    // New writes work and are indexed; reopening changes nothing.
    db.append_message("old1", &Message::user("a fresh message"), &at(5000.0))
        .unwrap();
    assert_eq!(db.get_session("old1").unwrap().unwrap().message_count, 4);
    db.close().unwrap();
    let db = SessionDb::open(&path).unwrap();
    assert_eq!(db.search(&SearchQuery::new("fresh")).unwrap().len(), 1);
    assert_eq!(db.message_count(None).unwrap(), 6);
}

#[test]
fn schema_10_external_content_fts_is_replaced_and_reindexed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(&V11_SCHEMA.replace("VALUES (11)", "VALUES (10)"))
            .unwrap();
        c.execute_batch(V10_FTS).unwrap();
        legacy_rows(&c);
    }
    assert_current_shape(&path);
    let db = SessionDb::open(&path).unwrap();
    assert_legacy_data(&db);
    let sql: String = db
        .conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'messages_fts'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!sql.contains("content=messages"), "{sql}");
}

#[test]
fn v21_usage_table_gains_task_in_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(&V11_SCHEMA.replace("VALUES (11)", "VALUES (21)"))
            .unwrap();
        c.execute_batch(
            "CREATE TABLE session_model_usage (
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                model TEXT NOT NULL, billing_provider TEXT NOT NULL DEFAULT '',
                billing_base_url TEXT NOT NULL DEFAULT '', billing_mode TEXT NOT NULL DEFAULT '',
                api_call_count INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER NOT NULL DEFAULT 0,
                output_tokens INTEGER NOT NULL DEFAULT 0, cache_read_tokens INTEGER NOT NULL DEFAULT 0,
                cache_write_tokens INTEGER NOT NULL DEFAULT 0, reasoning_tokens INTEGER NOT NULL DEFAULT 0,
                estimated_cost_usd REAL NOT NULL DEFAULT 0, actual_cost_usd REAL NOT NULL DEFAULT 0,
                cost_status TEXT, cost_source TEXT, first_seen REAL, last_seen REAL,
                PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode));
             INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1.0);
             INSERT INTO session_model_usage (session_id, model, input_tokens) VALUES ('s', 'm', 7);",
        )
        .unwrap();
    }
    let db = SessionDb::open(&path).unwrap();
    let pk: i64 = db
        .conn
        .query_row(
            "SELECT pk FROM pragma_table_info('session_model_usage') WHERE name = 'task'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(pk > 0);
    let (task, input): (String, i64) = db
        .conn
        .query_row(
            "SELECT task, input_tokens FROM session_model_usage",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((task.as_str(), input), ("", 7));
    drop(db);
    assert_current_shape(&path);
}

#[test]
fn duplicate_titles_keep_every_session_and_the_newest_title() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(V11_SCHEMA).unwrap();
        c.execute_batch(
            "INSERT INTO sessions (id, source, started_at, title) VALUES ('a', 'cli', 1, 'Same');
             INSERT INTO sessions (id, source, started_at, title) VALUES ('b', 'cli', 2, 'Same');",
        )
        .unwrap();
    }
    let db = SessionDb::open(&path).unwrap();
    assert_eq!(db.get_session("a").unwrap().unwrap().title, None);
    assert_eq!(
        db.get_session("b").unwrap().unwrap().title.as_deref(),
        Some("Same")
    );
}

#[test]
fn gateway_metadata_is_backfilled_from_sessions_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(V11_SCHEMA).unwrap();
        c.execute_batch(
            "INSERT INTO sessions (id, source, started_at) VALUES ('gw1', 'telegram', 1)",
        )
        .unwrap();
    }
    std::fs::create_dir(dir.path().join("sessions")).unwrap();
    std::fs::write(
        dir.path().join("sessions/sessions.json"),
        r#"{"_meta": 1, "telegram:dm:42": {"session_id": "gw1", "chat_type": "dm",
            "display_name": "Alice", "origin": {"chat_id": 42, "thread_id": null},
            "memory_flushed": true}}"#,
    )
    .unwrap();
    let db = SessionDb::open(&path).unwrap();
    let row: (String, String, String, String, String, i64) = db
        .conn
        .query_row(
            "SELECT session_key, chat_id, chat_type, display_name, origin_json, expiry_finalized FROM sessions WHERE id = 'gw1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
        )
        .unwrap();
    assert_eq!(row.0, "telegram:dm:42");
    assert_eq!(row.1, "42");
    assert_eq!((row.2.as_str(), row.3.as_str()), ("dm", "Alice"));
    assert_eq!(row.4, "{\"chat_id\": 42, \"thread_id\": null}");
    assert_eq!(row.5, 1);
}

#[test]
fn expected_columns_match_the_reference_reconstruction() {
    let cols = super::expected_columns().unwrap();
    let sessions = &cols.iter().find(|(t, _)| t == "sessions").unwrap().1;
    let get = |name: &str| sessions.iter().find(|(c, _)| c == name).unwrap().1.clone();
    assert_eq!(get("id"), "TEXT");
    assert_eq!(get("message_count"), "INTEGER DEFAULT 0");
    assert_eq!(get("archived"), "INTEGER NOT NULL DEFAULT 0");
    assert_eq!(get("source"), "TEXT NOT NULL");
    assert_eq!(sessions.len(), 46);
}
