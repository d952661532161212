#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! File compatibility with the reference implementation (hermes-agent 0.19.0).
//!
//! Needs a Python with the reference installed: set `HERMES_REF_PYTHON` to its interpreter
//! (e.g. `/tmp/refvenv/bin/python`). Without it these tests print a note and pass.

use std::path::{Path, PathBuf};
use std::process::Command;

use hermes_protocol::{Message, ToolCall};
use hermes_state::session_db::{
    ListFilter, MessageExtra, NewSession, SearchQuery, SessionDb, UsageDelta,
};
use rusqlite::Connection;
use serde_json::Value;

const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ref");

fn ref_python() -> Option<PathBuf> {
    match std::env::var_os("HERMES_REF_PYTHON").map(PathBuf::from) {
        Some(p) if p.exists() => Some(p),
        Some(p) => {
            eprintln!(
                "note: HERMES_REF_PYTHON={} does not exist; skipping",
                p.display()
            );
            None
        }
        None => {
            eprintln!(
                "note: HERMES_REF_PYTHON is not set; skipping the reference compatibility test"
            );
            None
        }
    }
}

/// Runs `tests/ref/<script>` with the reference and returns its JSON output.
fn run_ref(py: &Path, script: &str, args: &[&str], home: &Path) -> Value {
    let out = Command::new(py)
        .arg(Path::new(SCRIPTS).join(script))
        .args(args)
        .env("HERMES_HOME", home)
        .output()
        .expect("run the reference python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script} failed: {}\nstdout: {stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .expect("JSON output");
    serde_json::from_str(line).expect("valid JSON")
}

/// `sqlite_master` (sorted) plus every row of the canonical tables, as text.
fn snapshot(path: &Path, with_rows: bool) -> String {
    let c = Connection::open(path).unwrap();
    let mut out = String::new();
    let mut stmt = c
        .prepare(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name",
        )
        .unwrap();
    for row in stmt
        .query_map([], |r| {
            Ok(format!(
                "{}|{}|{}\n",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?
            ))
        })
        .unwrap()
    {
        out.push_str(&row.unwrap());
    }
    if with_rows {
        for table in [
            "schema_version",
            "sessions",
            "messages",
            "session_model_usage",
            "messages_fts_content",
            "messages_fts_trigram_content",
        ] {
            let n = c
                .prepare(&format!("SELECT * FROM {table}"))
                .unwrap()
                .column_count();
            let order = (1..=n)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            let mut stmt = c
                .prepare(&format!("SELECT * FROM {table} ORDER BY {order}"))
                .unwrap();
            let rows = stmt
                .query_map([], |r| {
                    let vals: Vec<String> = (0..n)
                        .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                        .collect();
                    Ok(vals.join(","))
                })
                .unwrap();
            for row in rows {
                out.push_str(&format!("{table}: {}\n", row.unwrap()));
            }
        }
    }
    out
}

fn extra(ts: f64) -> MessageExtra {
    MessageExtra {
        timestamp: ts,
        ..MessageExtra::default()
    }
}

#[test]
fn the_reference_reads_our_database() {
    let Some(py) = ref_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let mut db = SessionDb::open(&path).unwrap();
    db.create_session(&NewSession {
        id: "rs_1".into(),
        source: "cli".into(),
        model: Some("rs/model".into()),
        model_config: Some(serde_json::json!({"temperature": 0.3})),
        system_prompt: Some("You are the port.".into()),
        cwd: Some("/rs".into()),
        started_at: 100.0,
        ..NewSession::default()
    })
    .unwrap();
    db.append_message(
        "rs_1",
        &Message::user("How do I deploy docker on 日本語 servers?"),
        &extra(101.0),
    )
    .unwrap();
    let mut call = Message::assistant("Checking the docs.");
    call.tool_calls = vec![ToolCall::new(
        "call_1",
        "web_search",
        "{\"query\": \"docker deploy ünïcode\"}",
    )];
    call.reasoning = Some("search first".into());
    db.append_message(
        "rs_1",
        &call,
        &MessageExtra {
            timestamp: 102.0,
            token_count: Some(9),
            finish_reason: Some("tool_calls".into()),
        },
    )
    .unwrap();
    db.append_message(
        "rs_1",
        &Message::tool_result("call_1", "web_search", "Use docker compose up"),
        &extra(103.0),
    )
    .unwrap();
    db.append_message(
        "rs_1",
        &Message::assistant("Run docker compose up -d."),
        &extra(104.0),
    )
    .unwrap();
    db.set_title("rs_1", "Docker deploy").unwrap();
    db.add_usage(
        "rs_1",
        &UsageDelta {
            model: "rs/model".into(),
            billing_provider: "p".into(),
            input_tokens: 10,
            output_tokens: 5,
            api_calls: 1,
            ..UsageDelta::default()
        },
    )
    .unwrap();
    db.create_session(&NewSession {
        id: "rs_2".into(),
        source: "telegram".into(),
        started_at: 200.0,
        ..NewSession::default()
    })
    .unwrap();
    db.append_message(
        "rs_2",
        &Message::user("an unrelated \"exact phrase\" here"),
        &extra(201.0),
    )
    .unwrap();
    db.end_session("rs_2", "user_exit").unwrap();
    let queries = [
        "docker",
        "deploy*",
        "\"exact phrase\"",
        "日本語",
        "docker OR phrase",
        "web_search",
    ];
    let ours: Vec<Vec<(i64, String)>> = queries
        .iter()
        .map(|q| {
            db.search(&SearchQuery::new(*q))
                .unwrap()
                .into_iter()
                .map(|h| (h.message_id, h.snippet))
                .collect()
        })
        .collect();
    let our_list = db
        .list_sessions(&ListFilter {
            include_children: true,
            ..ListFilter::default()
        })
        .unwrap();
    let our_conv = db.conversation("rs_1").unwrap();
    db.close().unwrap();
    let before = snapshot(&path, false);

    let mut args = vec![path.to_str().unwrap()];
    args.extend(queries);
    let got = run_ref(&py, "read_db.py", &args, dir.path());

    // The reference found nothing to change in our schema.
    assert_eq!(snapshot(&path, false), before);

    let listed = got["sessions"].as_array().unwrap();
    assert_eq!(listed.len(), our_list.len());
    for (theirs, ours) in listed.iter().zip(&our_list) {
        assert_eq!(theirs["id"], ours.id.as_str());
        assert_eq!(theirs["preview"], ours.preview.as_str());
        assert_eq!(theirs["message_count"], ours.message_count);
        assert_eq!(theirs["last_active"].as_f64().unwrap(), ours.last_active);
    }
    let raw = &got["sessions_raw"]["rs_1"];
    assert_eq!(raw["title"], "Docker deploy");
    assert_eq!(raw["tool_call_count"], 1);
    assert_eq!(raw["input_tokens"], 10);
    assert_eq!(raw["api_call_count"], 1);
    assert_eq!(raw["model_config"], "{\"temperature\": 0.3}");

    let conv = got["conversations"]["rs_1"].as_array().unwrap();
    assert_eq!(conv.len(), our_conv.len());
    for (theirs, ours) in conv.iter().zip(&our_conv) {
        assert_eq!(theirs["role"], ours.role.as_str());
        assert_eq!(theirs["content"].as_str(), ours.content.as_deref());
        let their_calls: Vec<ToolCall> = serde_json::from_value(
            theirs
                .get("tool_calls")
                .cloned()
                .unwrap_or(Value::Array(vec![])),
        )
        .unwrap();
        assert_eq!(their_calls, ours.tool_calls);
        assert_eq!(
            theirs.get("tool_name").and_then(Value::as_str),
            ours.name.as_deref()
        );
        assert_eq!(
            theirs.get("reasoning").and_then(Value::as_str),
            ours.reasoning.as_deref()
        );
    }
    assert_eq!(
        conv[1]["tool_calls"][0]["function"]["arguments"],
        "{\"query\": \"docker deploy ünïcode\"}"
    );

    for (q, ours) in queries.iter().zip(&ours) {
        let theirs: Vec<(i64, String)> = got["search"][q]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["id"].as_i64().unwrap(),
                    h["snippet"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(&theirs, ours, "search {q:?}: same hits, order and snippets");
    }
    assert_eq!(got["message_count"], 5);
}

#[test]
fn we_read_the_reference_database() {
    let Some(py) = ref_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let written = run_ref(&py, "write_db.py", &[path.to_str().unwrap()], dir.path());
    let ids: Vec<i64> = written["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(snapshot(&path, false), schema_fixture());
    let before = snapshot(&path, true);

    let db = SessionDb::open(&path).unwrap();
    let s = db.get_session("ref_s1").unwrap().unwrap();
    assert_eq!(s.title.as_deref(), Some("Reference session"));
    assert_eq!(s.model.as_deref(), Some("ref/model"));
    assert_eq!(s.model_config.as_deref(), Some("{\"temperature\": 0.2}"));
    assert_eq!(s.system_prompt.as_deref(), Some("You are the reference."));
    assert_eq!(
        (s.message_count, s.tool_call_count, s.api_call_count),
        (4, 1, 1)
    );
    assert_eq!(
        (
            s.input_tokens,
            s.output_tokens,
            s.cache_read_tokens,
            s.reasoning_tokens
        ),
        (120, 30, 10, 4)
    );
    assert_eq!(s.billing_provider.as_deref(), Some("openrouter"));
    assert_eq!(s.estimated_cost_usd, Some(0.01));
    assert!(
        db.get_session("ref_s2")
            .unwrap()
            .unwrap()
            .ended_at
            .is_some()
    );

    let msgs = db.messages("ref_s1").unwrap();
    assert_eq!(
        msgs.iter().map(|m| m.id).collect::<Vec<_>>(),
        ids[..4].to_vec()
    );
    assert_eq!(msgs[1].finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(msgs[3].token_count, Some(12));
    let conv = db.conversation("ref_s1").unwrap();
    assert_eq!(
        conv[1].tool_calls,
        vec![ToolCall::new(
            "call_a",
            "read_file",
            "{\"path\": \"conf.yaml\"}"
        )]
    );
    assert_eq!(
        conv[1].reasoning.as_deref(),
        Some("the user wants the file")
    );
    assert_eq!(conv[2].name.as_deref(), Some("read_file"));
    assert_eq!(conv[2].tool_call_id.as_deref(), Some("call_a"));

    assert_eq!(
        db.search(&SearchQuery::new("zeppelins")).unwrap()[0].message_id,
        ids[4]
    );
    assert_eq!(
        db.search(&SearchQuery::new("日本語")).unwrap()[0].message_id,
        ids[0]
    );
    assert_eq!(db.search(&SearchQuery::new("read_file")).unwrap().len(), 2);
    assert_eq!(
        db.resolve_by_title("Reference session").unwrap().as_deref(),
        Some("ref_s1")
    );
    let list = db.list_sessions(&ListFilter::default()).unwrap();
    assert_eq!(
        list.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        vec!["ref_s2", "ref_s1"]
    );
    assert_eq!(
        list[1].preview,
        "Please read the Telegram config 日本語です"
    );

    let usage: (String, i64) = Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT model, input_tokens FROM session_model_usage WHERE session_id='ref_s1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(usage, ("ref/model".to_owned(), 120));
    db.close().unwrap();
    // Opening with our code changed nothing.
    assert_eq!(snapshot(&path, true), before);

    // And our writes on their file are readable by them.
    let mut db = SessionDb::open(&path).unwrap();
    db.append_message(
        "ref_s1",
        &Message::user("rust appended this"),
        &extra(5000.0),
    )
    .unwrap();
    db.close().unwrap();
    let got = run_ref(
        &py,
        "read_db.py",
        &[path.to_str().unwrap(), "appended"],
        dir.path(),
    );
    assert_eq!(got["search"]["appended"].as_array().unwrap().len(), 1);
    assert_eq!(got["sessions_raw"]["ref_s1"]["message_count"], 5);
}

fn schema_fixture() -> String {
    let dump = include_str!("fixtures/schema_v22.sql");
    // Same rows, `type|name|sql` format.
    let mut out = String::new();
    for chunk in dump.split("\n-- ").map(|c| c.trim_start_matches("-- ")) {
        let (head, sql) = chunk.split_once('\n').unwrap();
        let (ty, name) = head.split_once(' ').unwrap();
        out.push_str(&format!(
            "{ty}|{name}|{}\n",
            sql.trim_end().trim_end_matches(';')
        ));
    }
    out
}

fn legacy_file(path: &Path, version: i64, with_v10_fts: bool) {
    let c = Connection::open(path).unwrap();
    c.execute_batch(
        &include_str!("fixtures/legacy_v11_schema.sql")
            .replace("VALUES (11)", &format!("VALUES ({version})")),
    )
    .unwrap();
    if with_v10_fts {
        c.execute_batch(include_str!("fixtures/legacy_v10_fts.sql"))
            .unwrap();
    }
    c.execute_batch(include_str!("fixtures/legacy_rows.sql"))
        .unwrap();
}

fn migration_matches(version: i64, with_v10_fts: bool) {
    let Some(py) = ref_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs.db");
    let ours = dir.path().join("ours.db");
    legacy_file(&theirs, version, with_v10_fts);
    legacy_file(&ours, version, with_v10_fts);
    run_ref(&py, "open_db.py", &[theirs.to_str().unwrap()], dir.path());
    SessionDb::open(&ours).unwrap().close().unwrap();
    let (t, o) = (snapshot(&theirs, true), snapshot(&ours, true));
    assert_eq!(
        o, t,
        "the upgraded files are identical (schema text and every row)"
    );
    // Each implementation opens the other's upgrade without changing it.
    SessionDb::open(&theirs).unwrap().close().unwrap();
    assert_eq!(snapshot(&theirs, true), t);
    run_ref(&py, "open_db.py", &[ours.to_str().unwrap()], dir.path());
    assert_eq!(snapshot(&ours, true), o);
}

#[test]
fn upgrading_schema_11_matches_the_reference() {
    migration_matches(11, false);
}

#[test]
fn upgrading_schema_10_with_old_fts_matches_the_reference() {
    migration_matches(10, true);
}
