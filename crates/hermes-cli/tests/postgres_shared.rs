//! Two homes on one PostgreSQL database share more than sessions, through
//! the binary: cron jobs made on one are listed and run by the other, and of
//! two schedulers ticking at once exactly one runs a due job (the scheduler
//! lease and the fire claim); a pairing code issued on one replica is
//! approved with `hermes pairing approve` on another; `hermes sessions
//! export/delete` work there; `hermes sessions migrate` carries the cron
//! and pairing files along. Needs `HERMES_TEST_DATABASE_URL`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;

use hermes_gateway::messaging::pairing::PairingStore;
use hermes_mock::Reply;
use hermes_postgres::testing::Scratch;
use hermes_postgres::{PgStore, Target};
use hermes_state::documents::{self, Documents};
use serde_json::Value;
use support::*;

fn database() -> Option<String> {
    hermes_postgres::testing::database_url_or_skip()
}

/// A home on the scratch schema.
fn replica(url: &str, scratch: &Scratch) -> Sandbox {
    let sb = Sandbox::start();
    sb.add_config(&format!(
        "sessiondb:\n  provider: postgresql\n  url: {url}\n  schema: {}\n",
        scratch.schema
    ));
    sb
}

fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}\n{}", stdout(out), stderr(out));
    stdout(out)
}

fn jobs(store: &PgStore) -> Vec<Value> {
    let text = store
        .read("cron/jobs.json")
        .unwrap()
        .expect("jobs in the database");
    serde_json::from_str::<Value>(&text).unwrap()["jobs"]
        .as_array()
        .unwrap()
        .clone()
}

fn cron_requests(sb: &Sandbox) -> usize {
    sb.mock
        .chat_requests()
        .iter()
        .filter(|r| {
            r.to_string()
                .contains("You are running as a scheduled cron job")
        })
        .count()
}

#[test]
fn cron_jobs_are_shared_and_two_ticking_replicas_run_a_due_job_once() {
    let Some(url) = database() else { return };
    let scratch = Scratch::new(&url).unwrap();
    let a = replica(&url, &scratch);
    let b = replica(&url, &scratch);
    ok(&a.run(&[
        "cron",
        "add",
        "every 5m",
        "Report the disk use",
        "--name",
        "disk",
    ]));
    assert!(
        !a.home.path().join("cron/jobs.json").exists(),
        "the job went to the database, not the home"
    );
    let listed = ok(&b.run(&["cron", "list"]));
    assert!(
        listed.contains("disk") && listed.contains("every 5m"),
        "{listed}"
    );
    // Make it due, as a missed slot would be.
    documents::update(&scratch.store, &["cron/jobs.json"], None, |d| {
        let mut v: Value = serde_json::from_str(d[0].as_deref().unwrap()).unwrap();
        v["jobs"][0]["next_run_at"] = "2020-01-01T00:00:00+00:00".into();
        d[0] = Some(v.to_string());
    })
    .unwrap();
    let id = jobs(&scratch.store)[0]["id"].as_str().unwrap().to_owned();
    for sb in [&a, &b] {
        sb.mock.push(Reply::text("Disk at 42%."));
    }
    let ticks: Vec<_> = [&a, &b]
        .iter()
        .map(|sb| {
            sb.command()
                .args(["cron", "tick"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = ticks
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let said: Vec<String> = outs.iter().map(stderr).collect();
    assert!(outs.iter().all(|o| o.status.success()), "{said:?}");
    assert_eq!(
        cron_requests(&a) + cron_requests(&b),
        1,
        "exactly one replica ran the job: {said:?}"
    );
    assert_eq!(
        said.iter()
            .filter(|s| s.contains(&format!("ran disk ({id}): ok")))
            .count(),
        1,
        "{said:?}"
    );
    // Recorded once, moved to its next slot, its output in the database.
    let job = &jobs(&scratch.store)[0];
    assert_eq!(job["last_status"], "ok");
    assert_eq!(job["repeat"]["completed"], 1);
    assert!(job["fire_claim"].is_null(), "the claim is cleared: {job}");
    assert!(
        job["next_run_at"].as_str().unwrap() > "2026",
        "next slot in the future: {job}"
    );
    let outputs = scratch.store.list(&format!("cron/output/{id}")).unwrap();
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    let output = scratch.store.read(&outputs[0]).unwrap().unwrap();
    assert!(output.contains("Disk at 42%."), "{output}");
    assert!(!a.home.path().join("cron/output").exists());
    // Nothing is due now: another tick on either runs nothing.
    let again = b.command().args(["cron", "tick"]).output().unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(cron_requests(&a) + cron_requests(&b), 1);
    // Removing it on one removes it (and its outputs) for both.
    ok(&b.run(&["cron", "remove", &id]));
    assert!(jobs(&scratch.store).is_empty());
    assert!(
        scratch
            .store
            .list(&format!("cron/output/{id}"))
            .unwrap()
            .is_empty()
    );
    assert!(ok(&a.run(&["cron", "list"])).contains("No scheduled jobs"));
}

#[test]
fn a_pairing_code_issued_on_one_replica_is_approved_from_another() {
    let Some(url) = database() else { return };
    let scratch = Scratch::new(&url).unwrap();
    // What replica A's gateway does for a stranger's first message.
    let gateway_side: Arc<dyn Documents> =
        Arc::new(PgStore::open(Target::parse(&url, &scratch.schema).unwrap()).unwrap());
    let pairing = PairingStore::with_documents(gateway_side);
    let code = pairing
        .issue_code("telegram", "4242", "Ann")
        .unwrap()
        .unwrap();
    let b = replica(&url, &scratch);
    let listed = ok(&b.run(&["pairing", "list"]));
    assert!(listed.contains("4242"), "{listed}");
    let approved = ok(&b.run(&["pairing", "approve", "telegram", &code]));
    assert!(approved.contains("Approved"), "{approved}");
    assert!(
        pairing.is_approved("telegram", "4242"),
        "replica A sees the approval"
    );
    assert!(
        !b.home.path().join("platforms/pairing").exists(),
        "nothing was written to the home"
    );
    ok(&b.run(&["pairing", "revoke", "telegram", "4242"]));
    assert!(!pairing.is_approved("telegram", "4242"));
}

#[test]
fn sessions_export_and_delete_work_on_postgresql() {
    let Some(url) = database() else { return };
    let scratch = Scratch::new(&url).unwrap();
    let sb = replica(&url, &scratch);
    sb.mock.push(Reply::text("Paris."));
    let out = sb.chat("capital of France?", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let id = session_id_of(&out);
    let exported = ok(&sb.run(&["sessions", "export", "-", "--session-id", &id]));
    let line: Value = serde_json::from_str(exported.trim()).unwrap();
    assert_eq!(line["id"], id.as_str());
    assert_eq!(line["messages"][1]["content"], "Paris.");
    let shown = ok(&sb.run(&["sessions", "show", &id, "--json"]));
    assert!(shown.contains("capital of France?"), "{shown}");
    ok(&sb.run(&["sessions", "delete", &id, "--yes"]));
    use hermes_session::SessionStore;
    assert!(scratch.store.session(&id).unwrap().is_none());
    assert!(!ok(&sb.run(&["sessions", "list"])).contains(&id));
    // Bulk actions select there too: archive hides, prune deletes.
    sb.mock.push(Reply::text("Lyon."));
    let second = session_id_of(&sb.chat("second city?", &[]));
    let dry = ok(&sb.run(&["sessions", "prune", "--source", "cli", "--dry-run"]));
    assert!(dry.contains(&second) && dry.contains("Dry run"), "{dry}");
    let archived = ok(&sb.run(&["sessions", "archive", "--source", "cli", "--yes"]));
    assert!(archived.contains("Archived 1 session"), "{archived}");
    assert!(!ok(&sb.run(&["sessions", "list"])).contains(&second));
    let pruned = ok(&sb.run(&[
        "sessions",
        "prune",
        "--source",
        "cli",
        "--include-archived",
        "--yes",
    ]));
    assert!(pruned.contains("Pruned 1 session"), "{pruned}");
    assert!(scratch.store.session(&second).unwrap().is_none());
    assert!(ok(&sb.run(&["sessions", "optimize"])).contains("Vacuumed"));
}

#[test]
fn migrate_carries_the_cron_and_pairing_files_both_ways() {
    let Some(url) = database() else { return };
    let scratch = Scratch::new(&url).unwrap();
    let sb = Sandbox::start();
    // A home on state.db with a job and an approved user.
    ok(&sb.run(&[
        "cron",
        "add",
        "every 2h",
        "Summarize the news",
        "--name",
        "news",
    ]));
    let pairing = PairingStore::new(sb.home.path());
    let code = pairing.issue_code("slack", "U7", "Bo").unwrap().unwrap();
    pairing
        .approve(
            "slack",
            &code,
            hermes_gateway::messaging::pairing::Approver::Owner,
        )
        .unwrap();
    sb.mock.push(Reply::text("ok"));
    assert!(sb.chat("hello", &[]).status.success());
    let to_pg = ok(&sb.run(&[
        "sessions",
        "migrate",
        "--to",
        &url,
        "--schema",
        &scratch.schema,
    ]));
    assert!(to_pg.contains("cron and pairing files"), "{to_pg}");
    assert_eq!(jobs(&scratch.store)[0]["name"], "news");
    let on_pg = PairingStore::with_documents(Arc::new(
        PgStore::open(Target::parse(&url, &scratch.schema).unwrap()).unwrap(),
    ));
    assert!(on_pg.is_approved("slack", "U7"));
    // And back, into another home's state.db.
    let other = tempfile::tempdir().unwrap();
    let back = other.path().join("state.db");
    ok(&sb.run(&[
        "sessions",
        "migrate",
        "--from",
        &url,
        "--schema",
        &scratch.schema,
        "--to",
        back.to_str().unwrap(),
    ]));
    let text = std::fs::read_to_string(other.path().join("cron/jobs.json")).unwrap();
    assert!(text.contains("Summarize the news"), "{text}");
    assert!(PairingStore::new(other.path()).is_approved("slack", "U7"));
}

#[test]
fn mcp_serve_reads_the_conversations_a_replica_wrote() {
    use hermes_session::SessionStore;
    use hermes_state::session_db::{MessageExtra, NewSession, SessionRouting};
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    let Some(url) = database() else { return };
    let scratch = Scratch::new(&url).unwrap();
    // What a gateway replica writes for a Telegram DM.
    let store = &scratch.store;
    store
        .create_session(&NewSession {
            id: "tg_1".into(),
            source: "telegram".into(),
            started_at: 1_700_000_000.0,
            ..NewSession::default()
        })
        .unwrap();
    store
        .set_routing(
            "tg_1",
            &SessionRouting {
                session_key: "agent:main:telegram:dm:42".into(),
                chat_id: Some("42".into()),
                chat_type: Some("dm".into()),
                display_name: Some("Ann".into()),
                ..SessionRouting::default()
            },
        )
        .unwrap();
    let extra = MessageExtra {
        timestamp: 1_700_000_001.0,
        ..MessageExtra::default()
    };
    store
        .append_message(
            "tg_1",
            &hermes_protocol::Message::user("ping from Ann"),
            &extra,
        )
        .unwrap();
    let sb = replica(&url, &scratch);
    let mut child = sb
        .command()
        .args(["mcp", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut call = |line: &str| -> Value {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        let reply = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if line.contains("\"initialize\"") {
            stdin
                .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
                .unwrap();
        }
        reply
    };
    call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    let listed = call(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"conversations_list","arguments":{}}}"#,
    );
    let text = listed["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("agent:main:telegram:dm:42"), "{listed}");
    let read = call(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"messages_read","arguments":{"session_key":"agent:main:telegram:dm:42"}}}"#,
    );
    let text = read["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("ping from Ann"), "{read}");
    drop(stdin);
    let _ = child.wait();
}

#[test]
fn slack_replicas_keep_one_connection_so_an_approval_reaches_the_running_turn() {
    use std::time::{Duration, Instant};
    use support::slack::SlackPeer;
    use support::telegram::ChatGateway;
    let Some(url) = database() else { return };
    let Some(peer) = SlackPeer::start() else {
        return;
    };
    let scratch = Scratch::new(&url).unwrap();
    let shared = tempfile::tempdir().unwrap();
    let doomed = shared.path().join("doomed");
    std::fs::create_dir_all(doomed.join("x")).unwrap();
    let alice = peer.user_id("alice");
    let env = SlackPeer::env(Some(&alice));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let replicas: Vec<Sandbox> = (0..2)
        .map(|_| {
            let sb = replica(&url, &scratch);
            support::slack::configure(&sb, &peer, "gateway:\n  lease_seconds: 3\n");
            sb
        })
        .collect();
    // The first replica polls (and runs the turn); the second answers after it dies.
    replicas[0].mock.push_all([
        Reply::tool_call(
            "c1",
            "terminal",
            &serde_json::json!({"command": format!("rm -rf {}", doomed.display())}).to_string(),
        ),
        Reply::text("Deleted, as approved."),
    ]);
    replicas[1]
        .mock
        .push(Reply::text("Still here after the failover."));
    let mut first = ChatGateway::start_with(&replicas[0], &env, "slack: this replica polls now");
    let second = ChatGateway::start_with(&replicas[1], &env, "slack: standing by");
    peer.wait_connected();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(peer.connections(), 1, "the standby opened no connection");
    let dm = peer.dm_with("alice");
    let (ts, _) = peer.say("alice", &dm, "delete doomed", None);
    let ask = peer.wait_for(&dm, Some(&ts), "asking", |t| {
        t.contains("Command Approval Required")
    });
    let value = ask["blocks"][1]["elements"][0]["value"]
        .as_str()
        .unwrap()
        .to_owned();
    peer.press("alice", &dm, &ask, &value);
    peer.wait_for(&dm, Some(&ts), "after approval", |t| {
        t.contains("Deleted, as approved.")
    });
    assert!(!doomed.exists());
    // The holder dies; the standby connects and answers in the same thread.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let died = Instant::now();
    second.wait_log("slack: this replica polls now");
    assert!(died.elapsed() < Duration::from_secs(10));
    peer.say("alice", &dm, "still there?", Some(&ts));
    peer.wait_for(&dm, Some(&ts), "from the standby", |t| {
        t.contains("Still here after the failover.")
    });
    assert_eq!(peer.connections(), 2);
}
