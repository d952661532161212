//! Our binary on a `state.db` written by hermes-agent 0.19.0, and the reference on ours.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::*;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/reference_state.db"
);

fn with_reference_db() -> Sandbox {
    let sb = Sandbox::start();
    std::fs::copy(FIXTURE, sb.home.path().join("state.db")).unwrap();
    sb
}

fn sessions(sb: &Sandbox, args: &[&str]) -> String {
    let out = sb.command().arg("sessions").args(args).output().unwrap();
    assert!(out.status.success(), "sessions {args:?}: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn lists_and_filters_the_reference_sessions() {
    let sb = with_reference_db();
    let all = sessions(&sb, &["list"]);
    for id in [
        "20250301_101500_a1b2c3",
        "20250302_090000_d4e5f6",
        "20250303_120000_0a0b0c",
    ] {
        assert!(all.contains(id), "{id} missing:\n{all}");
    }
    assert!(all.contains("Flaky widget investigation"), "{all}");
    let tg = sessions(&sb, &["list", "--source", "telegram"]);
    assert!(
        tg.contains("20250303_120000_0a0b0c") && !tg.contains("20250301_101500_a1b2c3"),
        "{tg}"
    );
}

#[test]
fn shows_and_searches_the_reference_sessions() {
    let sb = with_reference_db();
    let shown = sessions(&sb, &["show", "Flaky widget investigation"]);
    assert!(
        shown.contains("Why does the flaky_widget test fail on CI?"),
        "{shown}"
    );
    assert!(shown.contains("pytest -k flaky_widget"), "{shown}");
    assert!(shown.contains("[tool terminal]"), "{shown}");
    assert!(shown.contains("1200 in / 150 out tokens"), "{shown}");
    let hits = sessions(&sb, &["search", "flaky_widget"]);
    assert!(hits.contains("20250301_101500_a1b2c3"), "{hits}");
    let cjk = sessions(&sb, &["search", "日本語"]);
    assert!(cjk.contains("20250302_090000_d4e5f6"), "{cjk}");
}

#[test]
fn resumes_a_reference_session_with_its_tool_history() {
    let sb = with_reference_db();
    sb.mock.push(Reply::text("Picking up where we left off."));
    let out = sb.chat(
        "so how do we fix it?",
        &["--resume", "Flaky widget investigation"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let req = sb.requests().pop().unwrap();
    let msgs = req["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        vec!["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(msgs[0]["content"], "You are Hermes (reference fixture).");
    assert_eq!(msgs[2]["tool_calls"][0]["id"], "call_ref_1");
    assert_eq!(msgs[2]["tool_calls"][0]["function"]["name"], "terminal");
    assert_eq!(msgs[3]["tool_call_id"], "call_ref_1");
    assert_eq!(msgs[5]["content"], "so how do we fix it?");
}

/// The reference's own SessionDB reads a file our binary wrote. Runs when
/// HERMES_REF_PYTHON names a Python with hermes-agent 0.19.0 installed (.ci/run sets it up).
#[test]
fn the_reference_reads_what_we_write() {
    let Some(python) =
        std::env::var_os("HERMES_REF_PYTHON").filter(|p| std::path::Path::new(p).exists())
    else {
        eprintln!(
            "skipped: set HERMES_REF_PYTHON to a Python with hermes-agent==0.19.0 to run this check"
        );
        return;
    };
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "call_ours",
        "terminal",
        r#"{"command":"echo written-by-rust"}"#,
    ));
    sb.mock.push(Reply::text("Done: the marmalade result."));
    let out = sb.chat("make marmalade", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let script = r#"
import json, pathlib, sys
import hermes_state
db = hermes_state.SessionDB(db_path=pathlib.Path(sys.argv[1]))
sessions = db.list_sessions_rich(limit=10)
sid = sessions[0]["id"]
conv = db.get_messages_as_conversation(sid)
hits = db.search_messages("marmalade")
print(json.dumps({"version": hermes_state.SCHEMA_VERSION, "count": len(sessions), "session": db.get_session(sid),
                  "conv": conv, "hits": [h["session_id"] for h in hits]}, default=str))
"#;
    let py = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(sb.home.path().join("state.db"))
        .env("HERMES_HOME", sb.home.path())
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "reference failed: {}",
        String::from_utf8_lossy(&py.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(
        py.stdout
            .rsplit(|b| *b == b'\n')
            .find(|l| !l.is_empty())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(v["count"], 1);
    assert_eq!(v["session"]["source"], "cli");
    assert_eq!(v["session"]["message_count"], 4);
    let conv = v["conv"].as_array().unwrap();
    let roles: Vec<&str> = conv.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, vec!["user", "assistant", "tool", "assistant"]);
    assert_eq!(conv[1]["tool_calls"][0]["function"]["name"], "terminal");
    assert_eq!(conv[2]["tool_call_id"], "call_ours");
    assert_eq!(
        v["hits"].as_array().unwrap().len(),
        2,
        "user and assistant messages mention marmalade"
    );
}
