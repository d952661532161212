//! `context.engine` naming a plugin's engine: when a resumed session crosses
//! the compression threshold the plugin gets the transcript over JSON-RPC
//! (`context/compress`) and its replacement is what the model sees next, in
//! a child session (lineage as the built-in compressor records it); an
//! engine whose answer breaks an invariant is overruled by the built-in
//! compressor.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use hermes_state::session_db::SessionDb;
use serde_json::Value;
use support::*;

/// A context engine that folds everything between the system prompt and the
/// latest user message into one line; with `DROP_LATEST` it (wrongly)
/// leaves the latest user message out. Each request's params go to `calls.jsonl`.
const ENGINE: &str = r#"#!/usr/bin/env python3
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
for line in sys.stdin:
    req = json.loads(line)
    method, params = req.get("method"), req.get("params") or {}
    if method == "initialize":
        result = {"tools": []}
    elif method == "context/compress":
        with open(os.path.join(here, "calls.jsonl"), "a") as f:
            f.write(json.dumps(params) + "\n")
        msgs = params["messages"]
        latest = [m for m in msgs if m["role"] == "user"][-1]
        folded = len(msgs) - 2
        if os.path.exists(os.path.join(here, "DROP_LATEST")):
            result = {"messages": [msgs[0], {"role": "user", "content": "[lcm: everything folded]"}]}
        else:
            result = {"messages": [msgs[0], {"role": "user",
                      "content": "[lcm: %d earlier messages folded]\n\n%s" % (folded, latest["content"])}]}
    else:
        result = None
    print(json.dumps({"jsonrpc": "2.0", "id": req.get("id"), "result": result}), flush=True)
"#;

fn long(n: usize) -> String {
    format!(
        "part {n}: {}",
        "the quick brown fox jumps over it ".repeat(60)
    )
}

/// Three long turns of one session with compression off; returns its id.
fn long_session(sb: &Sandbox) -> String {
    let dir = sb.home.path().join("plugins").join("lcm");
    std::fs::create_dir_all(&dir).unwrap();
    write(&dir, "engine.py", ENGINE);
    write(
        &dir,
        "plugin.yaml",
        "name: lcm\nversion: 0.1.0\ndescription: folds old turns\nexecutable: python3 engine.py\nprovides_context_engine: lcm\n",
    );
    // `context_length` continues the sandbox's `model:` section, its last.
    let base = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    let config = |enabled: bool| {
        format!(
            "{base}  context_length: 3000\ncompression:\n  enabled: {enabled}\n  protect_first_n: 1\ncontext:\n  engine: lcm\nplugins:\n  enabled: [lcm]\n"
        )
    };
    std::fs::write(sb.home.path().join("config.yaml"), config(false)).unwrap();
    sb.mock.push(Reply::text("noted one"));
    let first = sb.chat(&long(1), &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    let parent = session_id_of(&first);
    for n in 2..=3 {
        sb.mock.push(Reply::text(format!("noted {n}")));
        let out = sb.chat(&long(n), &["--resume", &parent]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    std::fs::write(sb.home.path().join("config.yaml"), config(true)).unwrap();
    parent
}

#[test]
fn a_plugin_engine_replaces_the_transcript_in_a_child_session() {
    let sb = Sandbox::start();
    let parent = long_session(&sb);
    sb.mock.push(Reply::text("noted four"));
    let last = sb.chat(&long(4), &["--resume", &parent]);
    assert!(last.status.success(), "{}", stderr(&last));
    assert_eq!(stdout(&last), "noted four\n");
    let child = session_id_of(&last);
    assert_ne!(child, parent, "{}", stderr(&last));

    let calls = std::fs::read_to_string(sb.home.path().join("plugins/lcm/calls.jsonl")).unwrap();
    let call: Value = serde_json::from_str(calls.lines().next().unwrap()).unwrap();
    assert_eq!(call["trigger"], "threshold");
    assert_eq!(call["context_length"], 3000);
    let sent = call["messages"].as_array().unwrap();
    assert_eq!(sent[0]["role"], "system");
    assert!(
        sent.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .starts_with("part 4")
    );

    // The model's next request is the engine's transcript.
    let body = sb.requests().pop().unwrap();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:#?}");
    let folded = messages[1]["content"].as_str().unwrap();
    assert!(
        folded.starts_with("[lcm: 6 earlier messages folded]\n\npart 4"),
        "{folded}"
    );

    let db = SessionDb::open_read_only(&sb.home.path().join("state.db")).unwrap();
    let c = db.get_session(&child).unwrap().unwrap();
    assert_eq!(c.parent_session_id.as_deref(), Some(parent.as_str()));
    assert_eq!(
        db.get_session(&parent)
            .unwrap()
            .unwrap()
            .end_reason
            .as_deref(),
        Some("compression")
    );
}

#[test]
fn an_engine_that_drops_the_latest_message_is_overruled_by_the_built_in_compressor() {
    let sb = Sandbox::start();
    let parent = long_session(&sb);
    write(&sb.home.path().join("plugins/lcm"), "DROP_LATEST", "");
    // The built-in compressor asks the main model for the summary, then the turn runs.
    sb.mock.push_all(vec![
        Reply::text("## Active Task\nUser asked: 'part 4'"),
        Reply::text("noted four"),
    ]);
    let last = sb.chat(&long(4), &["--resume", &parent]);
    assert!(last.status.success(), "{}", stderr(&last));
    assert_eq!(stdout(&last), "noted four\n");
    // Quiet mode shows no status lines; the log keeps them.
    let log = std::fs::read_to_string(sb.home.path().join("logs/agent.log")).unwrap();
    assert!(
        log.contains(
            "Context engine 'lcm' could not compress (it dropped the latest user message)"
        ),
        "{log}"
    );
    let body = sb.requests().pop().unwrap();
    assert!(body.to_string().contains("CONTEXT COMPACTION"), "{body}");
    assert!(!body.to_string().contains("everything folded"));
}

#[test]
fn an_engine_no_plugin_provides_is_named_and_the_built_in_compressor_stays() {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config("context:\n  engine: nowhere\n");
    sb.mock.push(Reply::text("fine"));
    let out = sb.chat("hello", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("context engine 'nowhere' is not provided by any enabled plugin")
    );
}
