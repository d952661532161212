//! `memory.provider: honcho` against a fake Honcho v3 server
//! (`fixtures/fake_honcho.py`: the SDK's routes kept in memory, every
//! request recorded — not Honcho itself, which needs Postgres and a model):
//! the session and peers are created, each exchange is kept, a conclusion
//! written in one session comes back in the next one's recall, the tools
//! answer from the server, and a server that refuses the key costs the turn
//! its recall only.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::*;

/// The fake server, killed on drop.
struct FakeHoncho {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl FakeHoncho {
    fn start(key: Option<&str>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("requests.jsonl");
        let mut cmd = Command::new("python3");
        cmd.arg(fixture("fake_honcho.py")).arg(&log);
        if let Some(key) = key {
            cmd.arg(key);
        }
        let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the fake prints its port");
        Self {
            child,
            port,
            log,
            _dir: dir,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn find(&self, method: &str, path_end: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["method"] == method && r["path"].as_str().unwrap().ends_with(path_end))
            .collect()
    }
}

impl Drop for FakeHoncho {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A sandbox whose config turns Honcho on against `honcho` with `extra`
/// honcho.json keys.
fn sandbox(honcho: &FakeHoncho, extra: Value) -> Sandbox {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config("memory:\n  provider: honcho\n");
    let mut file = json!({"baseUrl": honcho.url(), "workspace": "tests"});
    file.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    write(sb.home.path(), "honcho.json", &file.to_string());
    sb
}

/// The Honcho session a one-shot in the sandbox's work directory uses.
fn session_name(sb: &Sandbox) -> String {
    let base = sb.work.path().file_name().unwrap().to_string_lossy();
    base.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[test]
fn a_conclusion_from_one_session_is_recalled_in_the_next_and_turns_are_kept() {
    let honcho = FakeHoncho::start(None);
    let sb = sandbox(&honcho, json!({}));
    sb.mock.push_all(vec![
        Reply::tool_call(
            "c1",
            "honcho_conclude",
            &json!({"conclusion": "The user's favourite editor is Helix"}).to_string(),
        ),
        Reply::text("Noted: Helix."),
    ]);
    let out = sb.chat("I always edit in Helix, remember that", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let first = sb.requests();
    let tools = tool_names(&first[0]);
    for tool in [
        "honcho_profile",
        "honcho_search",
        "honcho_reasoning",
        "honcho_context",
        "honcho_conclude",
    ] {
        assert!(
            tools.contains(&tool.to_owned()),
            "{tool} missing: {tools:?}"
        );
    }
    assert!(system_text(&first[0]).contains("# Honcho Memory\nActive, hybrid mode"));
    let result = tool_content(messages_with_role(&first[1], "tool")[0]);
    assert_eq!(
        result["result"],
        "Conclusion saved for user: The user's favourite editor is Helix"
    );

    // The workspace, both peers and the session were created, with observation settings.
    let session = session_name(&sb);
    let user_peer = format!("user-default-{session}");
    assert_eq!(
        honcho.find("POST", "/v3/workspaces")[0]["body"],
        json!({"id": "tests"})
    );
    let peers: Vec<Value> = honcho
        .find("POST", "/peers")
        .iter()
        .map(|r| r["body"]["id"].clone())
        .collect();
    assert!(
        peers.contains(&json!(user_peer)) && peers.contains(&json!("hermes")),
        "{peers:?}"
    );
    let joined = &honcho.find("POST", &format!("/sessions/{session}/peers"))[0]["body"];
    assert_eq!(
        joined[&user_peer],
        json!({"observe_me": true, "observe_others": true})
    );
    // The conclusion is the assistant's view of the user.
    let made = &honcho.find("POST", "/conclusions")[0]["body"]["conclusions"][0];
    assert_eq!(made["observer_id"], "hermes");
    assert_eq!(made["observed_id"], json!(user_peer));
    assert_eq!(made["session_id"], json!(session));
    // The exchange was kept, the user's words without any recall block.
    let kept =
        &honcho.find("POST", &format!("/sessions/{session}/messages"))[0]["body"]["messages"];
    assert_eq!(
        kept,
        &json!([
            {"peer_id": user_peer, "content": "I always edit in Helix, remember that"},
            {"peer_id": "hermes", "content": "Noted: Helix."},
        ])
    );

    sb.mock.push(Reply::text("Helix."));
    let out = sb.chat("which editor should I open this file with?", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let user = last_user_text(&sb.requests().pop().unwrap());
    assert!(
        user.starts_with("which editor should I open this file with?\n\n<memory-context>"),
        "{user}"
    );
    assert!(
        user.contains("## Session Summary\n2 messages so far."),
        "{user}"
    );
    assert!(
        user.contains("## User Representation\nThe user's favourite editor is Helix"),
        "{user}"
    );
    // The first turn's dialectic answer rides along too.
    assert!(
        user.contains("Known: The user's favourite editor is Helix"),
        "{user}"
    );
    let asked = honcho.find("GET", "/peers/hermes/context");
    assert!(
        asked
            .iter()
            .any(|r| r["query"]["target"] == json!(user_peer)
                && r["query"]["search_query"] == "which editor should I open this file with?"),
        "{asked:?}"
    );
}

#[test]
fn the_tools_read_and_write_cards_search_what_was_said_and_manage_conclusions() {
    let honcho = FakeHoncho::start(None);
    let sb = sandbox(&honcho, json!({"peerName": "ann", "recallMode": "tools"}));
    sb.mock.push(Reply::text("Hello Ann."));
    assert!(
        sb.chat("the deploy target is the staging cluster", &[])
            .status
            .success()
    );

    sb.mock.push_all(vec![
        Reply::tool_call(
            "c1",
            "honcho_profile",
            r#"{"card": ["Name: Ann", "Prefers short answers"]}"#,
        ),
        Reply::tool_call("c2", "honcho_profile", "{}"),
        Reply::tool_call("c3", "honcho_search", r#"{"query": "deploy staging"}"#),
        Reply::tool_call(
            "c4",
            "honcho_conclude",
            r#"{"conclusion": "Ann deploys to staging first"}"#,
        ),
        Reply::tool_call("c5", "honcho_conclude", r#"{"list": true}"#),
        Reply::tool_call(
            "c6",
            "honcho_reasoning",
            r#"{"query": "where does Ann deploy?", "reasoning_level": "high"}"#,
        ),
        Reply::tool_call("c7", "honcho_context", "{}"),
        Reply::tool_call(
            "c8",
            "honcho_conclude",
            r#"{"conclusion": "x", "list": true}"#,
        ),
        Reply::text("done"),
    ]);
    let out = sb.chat("check what you know about me", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let last = sb.requests().pop().unwrap();
    // Tools mode: no recall block on the message.
    assert!(!last_user_text(&last).contains("<memory-context>"));
    let results: Vec<Value> = messages_with_role(&last, "tool")
        .iter()
        .map(|m| tool_content(m))
        .collect();
    assert_eq!(results[0]["result"], "Peer card updated (2 facts).");
    assert_eq!(
        results[1]["result"],
        json!(["Name: Ann", "Prefers short answers"])
    );
    let found = results[2]["result"].as_str().unwrap();
    let session = session_name(&sb);
    assert!(
        found.starts_with(&format!(
            "[ann · {session}] the deploy target is the staging cluster"
        )),
        "{found}"
    );
    assert_eq!(
        results[3]["result"],
        "Conclusion saved for user: Ann deploys to staging first"
    );
    let listed = results[4]["conclusions"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["content"], "Ann deploys to staging first");
    assert_eq!(results[5]["result"], "Known: Ann deploys to staging first");
    let ctx = results[6]["result"].as_str().unwrap();
    assert!(
        ctx.contains("## Card\nName: Ann\nPrefers short answers"),
        "{ctx}"
    );
    assert!(
        ctx.contains("## Recent messages\n  [ann] the deploy target is the staging cluster"),
        "{ctx}"
    );
    assert_eq!(
        results[7]["error"],
        "Exactly one of conclusion, delete_id, or list must be provided."
    );
    let chat = &honcho.find("POST", "/peers/hermes/chat")[0]["body"];
    assert_eq!(chat["reasoning_level"], "high");
    assert_eq!(chat["target"], "ann");

    // Deleting by the listed id.
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    sb.mock.push_all(vec![
        Reply::tool_call(
            "d1",
            "honcho_conclude",
            &json!({"delete_id": id}).to_string(),
        ),
        Reply::text("removed"),
    ]);
    assert!(sb.chat("forget that", &[]).status.success());
    let result = tool_content(messages_with_role(&sb.requests().pop().unwrap(), "tool")[0]);
    assert_eq!(result["result"], format!("Conclusion {id} deleted."));
    assert_eq!(
        honcho.find("DELETE", &format!("/conclusions/{id}")).len(),
        1
    );
}

#[test]
fn built_in_memory_adds_about_the_user_become_conclusions_and_context_mode_has_no_tools() {
    let honcho = FakeHoncho::start(None);
    let sb = sandbox(&honcho, json!({"recallMode": "context"}));
    sb.mock.push_all(vec![
        Reply::tool_call(
            "c1",
            "memory",
            r#"{"action": "add", "target": "user", "content": "Works night shifts"}"#,
        ),
        Reply::text("ok"),
    ]);
    let out = sb.chat("note that I work nights", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let first = sb.requests();
    assert!(
        !tool_names(&first[0])
            .iter()
            .any(|t| t.starts_with("honcho_"))
    );
    assert!(system_text(&first[0]).contains("context mode"));
    let made = honcho.find("POST", "/conclusions");
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!(
        made[0]["body"]["conclusions"][0]["content"],
        "Works night shifts"
    );
}

#[test]
fn a_refused_key_costs_the_turn_its_recall_and_says_what_to_check() {
    let honcho = FakeHoncho::start(Some("right-key"));
    let sb = sandbox(
        &honcho,
        json!({"hosts": {"hermes": {"apiKey": "wrong-key"}}}),
    );
    sb.mock.push(Reply::text("answered anyway"));
    let out = sb.chat("hello there, what's new?", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "answered anyway");
    assert!(!last_user_text(&sb.requests()[0]).contains("<memory-context>"));
    assert_eq!(honcho.requests()[0]["auth"], "Bearer wrong-key");
    let log = std::fs::read_to_string(sb.home.path().join("logs/agent.log")).unwrap();
    assert!(
        log.contains("HTTP 401") && log.contains("HONCHO_API_KEY"),
        "{log}"
    );
    assert!(!log.contains("wrong-key"), "the key never reaches the log");
}

#[test]
fn honcho_without_a_key_or_url_is_named_and_the_session_goes_on() {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config("memory:\n  provider: honcho\n");
    sb.mock.push(Reply::text("fine"));
    let out = sb.chat("hello", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "memory provider 'honcho' is off for this session: it is not set up: set HONCHO_API_KEY"
        ),
        "{}",
        stderr(&out)
    );
}
