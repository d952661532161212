//! `memory.provider: holographic` as a user runs it: the model stores a fact
//! with `fact_store` in one session, and the next session's request carries
//! it in the `<memory-context>` block on the user's message; a store that
//! cannot open leaves the session running on the built-in memory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::json;
use support::*;

#[test]
fn a_fact_stored_in_one_session_is_recalled_in_the_next() {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config("memory:\n  provider: holographic\n");
    sb.mock.push_all(vec![
        Reply::tool_call(
            "c1",
            "fact_store",
            &json!({"action": "add", "content": "The user's dog is named Pixel", "category": "user_pref"})
                .to_string(),
        ),
        Reply::text("Noted."),
    ]);
    let out = sb.chat("my dog is called Pixel, remember that", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let first = sb.requests();
    let tools = tool_names(&first[0]);
    assert!(
        tools.contains(&"fact_store".to_owned()) && tools.contains(&"fact_feedback".to_owned()),
        "{tools:?}"
    );
    assert!(system_text(&first[0]).contains("# Holographic Memory\nActive. Empty fact store"));
    let result = tool_content(messages_with_role(&first[1], "tool")[0]);
    assert_eq!(result["status"], "added", "{result}");
    assert!(sb.home.path().join("memory_store.db").exists());

    sb.mock.push(Reply::text("Pixel."));
    let out = sb.chat("what was the name of my dog?", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let second = sb.requests().pop().unwrap();
    let user = last_user_text(&second);
    assert!(
        user.starts_with("what was the name of my dog?\n\n<memory-context>"),
        "{user}"
    );
    assert!(
        user.contains(
            "## Holographic Memory\n- [0.5] The user's dog is named Pixel\n</memory-context>"
        ),
        "{user}"
    );
    assert!(system_text(&second).contains("1 facts stored"));
    // What the session keeps is the user's own words.
    let id = session_id_of(&out);
    let export = sb.run(&["sessions", "export", "--session-id", &id, "-"]);
    let exported = stdout(&export);
    assert!(
        exported.contains("what was the name of my dog?"),
        "{exported}{}",
        stderr(&export)
    );
    assert!(!exported.contains("memory-context"), "{exported}");
}

#[test]
fn built_in_memory_writes_reach_the_fact_store() {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config("memory:\n  provider: holographic\n");
    sb.mock.push_all(vec![
        Reply::tool_call(
            "c1",
            "memory",
            r#"{"action": "add", "target": "user", "content": "Prefers answers in French"}"#,
        ),
        Reply::text("ok"),
        Reply::text("d'accord"),
    ]);
    assert!(
        sb.chat("answer in French from now on", &[])
            .status
            .success()
    );
    let out = sb.chat("which language should answers be in? French?", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let user = last_user_text(&sb.requests().pop().unwrap());
    assert!(user.contains("- [0.5] Prefers answers in French"), "{user}");
}

#[test]
fn a_store_that_cannot_open_leaves_the_session_on_built_in_memory() {
    let sb = Sandbox::start();
    sb.no_retries();
    // The database path is a directory: the provider cannot open it.
    let blocked = sb.home.path().join("blocked.db");
    std::fs::create_dir_all(&blocked).unwrap();
    sb.add_config(&format!(
        "memory:\n  provider: holographic\nplugins:\n  hermes-memory-store:\n    db_path: {}\n",
        blocked.display()
    ));
    sb.mock.push(Reply::text("still here"));
    let out = sb.chat("hello", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "still here");
    assert!(
        stderr(&out).contains("memory provider 'holographic' is off for this session"),
        "{}",
        stderr(&out)
    );
    assert!(!tool_names(&sb.requests()[0]).contains(&"fact_store".to_owned()));
}

#[test]
fn an_unknown_provider_is_named_and_the_session_goes_on() {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config("memory:\n  provider: mem0\n");
    sb.mock.push(Reply::text("fine"));
    let out = sb.chat("hello", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("memory provider 'mem0' is not available"),
        "{}",
        stderr(&out)
    );
}

/// A memory provider plugin: keeps each exchange in `notes.jsonl` and
/// recalls every stored user line on prefetch; logs every method it gets.
const NOTES_PLUGIN: &str = r###"#!/usr/bin/env python3
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
notes = os.path.join(here, "notes.jsonl")
for line in sys.stdin:
    req = json.loads(line)
    method, params = req.get("method"), req.get("params") or {}
    with open(os.path.join(here, "methods.log"), "a") as f:
        f.write(method + "\n")
    result = None
    if method == "initialize":
        result = {"tools": []}
    elif method == "memory/initialize":
        result = {"system_prompt": "# Notes memory\nActive."}
    elif method == "memory/sync_turn":
        with open(notes, "a") as f:
            f.write(json.dumps(params["user_content"]) + "\n")
    elif method == "memory/prefetch":
        kept = [json.loads(l) for l in open(notes)] if os.path.exists(notes) else []
        result = {"context": "## Notes\n" + "\n".join("- " + k for k in kept)} if kept else ""
    print(json.dumps({"jsonrpc": "2.0", "id": req.get("id"), "result": result}), flush=True)
"###;

#[test]
fn a_plugin_memory_provider_keeps_turns_and_recalls_them_in_the_next_session() {
    let sb = Sandbox::start();
    sb.no_retries();
    let dir = sb.home.path().join("plugins").join("notes");
    std::fs::create_dir_all(&dir).unwrap();
    write(&dir, "notes.py", NOTES_PLUGIN);
    write(
        &dir,
        "plugin.yaml",
        "name: notes\nexecutable: python3 notes.py\nprovides_memory_provider: notes\n",
    );
    sb.add_config("memory:\n  provider: notes\nplugins:\n  enabled: [notes]\n");
    sb.mock.push(Reply::text("Teal it is."));
    let out = sb.chat("my favourite colour is teal", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(system_text(&sb.requests()[0]).contains("# Notes memory\nActive."));

    sb.mock.push(Reply::text("Teal."));
    let out = sb.chat("what colour do I like?", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let user = last_user_text(&sb.requests().pop().unwrap());
    assert!(
        user.contains("<memory-context>")
            && user.contains("## Notes\n- my favourite colour is teal"),
        "{user}"
    );
    let methods = std::fs::read_to_string(dir.join("methods.log")).unwrap();
    for method in [
        "memory/initialize",
        "memory/on_turn_start",
        "memory/prefetch",
        "memory/sync_turn",
        "memory/on_session_end",
        "memory/shutdown",
    ] {
        assert!(
            methods.contains(method),
            "{method} never called:\n{methods}"
        );
    }
}
