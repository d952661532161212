//! Webhooks end to end: routes made with `hermes webhook subscribe`, served
//! by `hermes gateway run` on their own port, signed requests running the
//! agent (its answer to the log, back in the HTTP reply, or into a chat),
//! forged and replayed ones refused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::gateway::{Gateway, http_try};
use support::{Sandbox, free_port, stderr, stdout};

/// Webhook config on `port` (loopback), plus `extra` YAML under `platforms:`.
fn enable(sb: &Sandbox, port: u16, extra: &str) {
    sb.no_retries();
    sb.add_config(&format!(
        "platforms:\n  webhook:\n    enabled: true\n    extra:\n      host: 127.0.0.1\n      port: {port}\n{extra}"
    ));
}

/// `hermes gateway run`, ready when the webhook listener answers.
fn start(sb: &Sandbox, port: u16) -> Gateway {
    let child = sb
        .command()
        .args(["gateway", "run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let gw = Gateway { child, port };
    let deadline = Instant::now() + Duration::from_secs(20);
    while http_try(port, "GET", "/health", &[], "").map_or(0, |a| a.0) != 200 {
        assert!(
            Instant::now() < deadline,
            "the webhook listener never answered"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    gw
}

/// HMAC-SHA256 hex, computed with openssl (an independent implementation).
fn hmac_hex(secret: &str, body: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("openssl")
        .args(["dgst", "-sha256", "-hmac", secret, "-hex"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.trim().rsplit(' ').next().unwrap().to_owned()
}

/// POSTs `body` to `/webhooks/<route>` with GitHub's headers.
fn post_github(
    port: u16,
    route: &str,
    secret: &str,
    event: &str,
    delivery: &str,
    body: &Value,
) -> (u16, Value) {
    let text = body.to_string();
    let sig = format!("sha256={}", hmac_hex(secret, &text));
    let (status, _, reply) = http_try(
        port,
        "POST",
        &format!("/webhooks/{route}"),
        &[
            ("Content-Type", "application/json"),
            ("X-Hub-Signature-256", &sig),
            ("X-GitHub-Event", event),
            ("X-GitHub-Delivery", delivery),
        ],
        &text,
    )
    .unwrap();
    (
        status,
        serde_json::from_str(&reply).unwrap_or(Value::String(reply)),
    )
}

/// The secret `subscribe` printed.
fn printed_secret(out: &str) -> String {
    out.lines()
        .find_map(|l| l.trim().strip_prefix("Secret: "))
        .unwrap()
        .to_owned()
}

/// The user message of a model request.
fn user_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `(source, end_reason, session_key, chat_type)` of a session row.
type Row = (String, Option<String>, Option<String>, Option<String>);

/// Every session's [`Row`].
fn sessions(sb: &Sandbox) -> Vec<Row> {
    let db = rusqlite::Connection::open(sb.home.path().join("state.db")).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT source, end_reason, session_key, chat_type FROM sessions ORDER BY started_at",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_signed_event_runs_the_agent_once_and_forged_or_replayed_ones_do_not() {
    let sb = Sandbox::start();
    let port = free_port();
    enable(&sb, port, "");
    let made = sb.run(&[
        "webhook",
        "subscribe",
        "GH Push",
        "--events",
        "push,test",
        "--prompt",
        "Commit to {repository.full_name}: {head_commit.message} (missing: {nope})",
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let said = stdout(&made);
    assert!(
        said.contains("Created webhook subscription: gh-push"),
        "{said}"
    );
    assert!(
        said.contains(&format!("URL:    http://127.0.0.1:{port}/webhooks/gh-push")),
        "{said}"
    );
    let secret = printed_secret(&said);
    assert_eq!(secret.len(), 43);
    let file = sb.home.path().join("webhook_subscriptions.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["gh-push"]["events"], json!(["push", "test"]));
    assert_eq!(saved["gh-push"]["deliver"], "log");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let listed = stdout(&sb.run(&["webhook", "list"]));
    assert!(
        listed.contains("◆ gh-push") && listed.contains("Events:  push, test"),
        "{listed}"
    );

    sb.mock.push(Reply::text("Looked at the commit."));
    let _gw = start(&sb, port);
    let push = json!({"repository": {"full_name": "acme/app"}, "head_commit": {"message": "Fix the login bug"}});

    // A forged signature, an event the route does not take, an unknown route:
    // none reaches the model.
    let (status, body) = post_github(port, "gh-push", "not-the-secret", "push", "d-0", &push);
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("Invalid signature"))
    );
    let (status, body) = post_github(port, "gh-push", &secret, "issues", "d-1", &push);
    assert_eq!((status, body["status"].as_str()), (200, Some("ignored")));
    let (status, _) = post_github(port, "nope", &secret, "push", "d-2", &push);
    assert_eq!(status, 404);
    let (status, _, _) = http_try(
        port,
        "POST",
        "/webhooks/gh-push",
        &[("Content-Type", "application/json")],
        &push.to_string(),
    )
    .unwrap();
    assert_eq!(status, 401, "an unsigned request is refused");

    let (status, body) = post_github(port, "gh-push", &secret, "push", "d-3", &push);
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["status"], "accepted");
    assert_eq!(body["delivery_id"], "d-3");
    wait_until("the model request", || !sb.requests().is_empty());
    assert_eq!(
        user_text(&sb.requests()[0]),
        "Commit to acme/app: Fix the login bug (missing: {nope})"
    );
    // The sender's retry of the same delivery is not run again.
    let (status, body) = post_github(port, "gh-push", &secret, "push", "d-3", &push);
    assert_eq!((status, body["status"].as_str()), (200, Some("duplicate")));
    wait_until("the session to end", || {
        sessions(&sb)
            .iter()
            .any(|s| s.1.as_deref() == Some("webhook_complete"))
    });
    let rows = sessions(&sb);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "webhook");
    assert_eq!(
        rows[0].2.as_deref(),
        Some("agent:main:webhook:webhook:webhook:gh-push:d-3:webhook:gh-push")
    );
    assert_eq!(rows[0].3.as_deref(), Some("webhook"));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(sb.requests().len(), 1, "one model request in all");
    let log = std::fs::read_to_string(sb.home.path().join("logs/gateway.log")).unwrap();
    assert!(
        log.contains("'gh-push' answered") && log.contains("Looked at the commit."),
        "{log}"
    );
    assert!(!log.contains(&secret), "the secret stays out of the log");

    // `hermes webhook test` signs its event like a sender would.
    sb.mock.push(Reply::text("Test seen."));
    let tested = sb.run(&["webhook", "test", "gh-push"]);
    assert!(
        tested.status.success(),
        "{}{}",
        stdout(&tested),
        stderr(&tested)
    );
    assert!(
        stdout(&tested).contains("Response (202)"),
        "{}",
        stdout(&tested)
    );
    wait_until("the test's model request", || sb.requests().len() == 2);
    assert!(user_text(&sb.requests()[1]).contains("Commit to {repository.full_name}"));

    // Removed, the route is gone at once (the file is re-read when it changes).
    let removed = sb.run(&["webhook", "remove", "gh-push"]);
    assert!(stdout(&removed).contains("Removed webhook subscription: gh-push"));
    let (status, _) = post_github(port, "gh-push", &secret, "push", "d-4", &push);
    assert_eq!(status, 404);
    let again = sb.run(&["webhook", "remove", "gh-push"]);
    assert_eq!(again.status.code(), Some(1));
}

#[test]
fn an_http_route_answers_in_the_reply_and_static_routes_take_other_signatures() {
    let sb = Sandbox::start();
    let port = free_port();
    enable(
        &sb,
        port,
        "      routes:\n        alerts:\n          secret: static-secret\n          deliver: http\n          prompt: \"Alert {alert.name} at {alert.level}\"\n",
    );
    sb.mock
        .push(Reply::text("The disk is nearly full; clean /var/log."));
    let _gw = start(&sb, port);
    let body = json!({"alert": {"name": "disk", "level": 95}}).to_string();
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string();
    let sig = hmac_hex("static-secret", &format!("{ts}.{body}"));
    let (status, _, reply) = http_try(
        port,
        "POST",
        "/webhooks/alerts",
        &[
            ("Content-Type", "application/json"),
            ("X-Webhook-Signature-V2", &sig),
            ("X-Webhook-Timestamp", &ts),
            ("X-Request-ID", "alert-1"),
        ],
        &body,
    )
    .unwrap();
    let reply: Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["status"], "ok");
    assert_eq!(
        reply["response"],
        "The disk is nearly full; clean /var/log."
    );
    assert_eq!(user_text(&sb.requests()[0]), "Alert disk at 95");
    assert!(reply["session_id"].as_str().is_some_and(|s| !s.is_empty()));

    // A timestamp from long ago is refused even with a good MAC (a replay).
    let old = "1000000000";
    let sig = hmac_hex("static-secret", &format!("{old}.{body}"));
    let (status, _, _) = http_try(
        port,
        "POST",
        "/webhooks/alerts",
        &[
            ("X-Webhook-Signature-V2", &sig),
            ("X-Webhook-Timestamp", old),
        ],
        &body,
    )
    .unwrap();
    assert_eq!(status, 401);
    // GitLab's token header.
    sb.mock.push(Reply::text("ok"));
    let (status, _, _) = http_try(
        port,
        "POST",
        "/webhooks/alerts",
        &[
            ("X-Gitlab-Token", "static-secret"),
            ("X-Request-ID", "alert-2"),
        ],
        &body,
    )
    .unwrap();
    assert_eq!(status, 200);
    let (status, _, _) = http_try(
        port,
        "POST",
        "/webhooks/alerts",
        &[
            ("X-Gitlab-Token", "static-secreT"),
            ("X-Request-ID", "alert-3"),
        ],
        &body,
    )
    .unwrap();
    assert_eq!(status, 401);
    assert_eq!(sb.requests().len(), 2);
}

#[test]
fn a_dangerous_command_in_a_webhook_run_is_refused_not_left_waiting() {
    let sb = Sandbox::start();
    let port = free_port();
    enable(
        &sb,
        port,
        "      routes:\n        ops:\n          secret: s\n          deliver: http\nplatform_toolsets:\n  webhook: [terminal]\n",
    );
    std::fs::create_dir(sb.work_path("build")).unwrap();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        &json!({"command": "rm -rf ./build"}).to_string(),
    ));
    sb.mock.push(Reply::text("I could not remove it."));
    let _gw = start(&sb, port);
    let body = json!({"task": "clean"});
    let (status, reply) = post_github(port, "ops", "s", "push", "ops-1", &body);
    assert_eq!(status, 200, "{reply}");
    let requests = sb.requests();
    assert_eq!(requests.len(), 2);
    let tool = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        tool.to_lowercase().contains("block") || tool.contains("approv"),
        "{tool}"
    );
    assert!(sb.work_path("build").exists(), "the command never ran");
}

#[test]
fn an_answer_and_a_direct_message_are_delivered_to_telegram() {
    let Some(tg) = support::telegram::Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    let port = free_port();
    support::telegram::configure(
        &sb,
        &tg,
        &format!(
            "  webhook:\n    enabled: true\n    extra:\n      host: 127.0.0.1\n      port: {port}\n"
        ),
    );
    // The chat must exist on the emulator's side: the person says hello first.
    tg.user_says(4242, "hello");
    let made = sb.run(&[
        "webhook",
        "subscribe",
        "deploys",
        "--deliver",
        "telegram",
        "--deliver-chat-id",
        "4242",
        "--prompt",
        "Summarise the deploy of {service}",
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let secret = printed_secret(&stdout(&made));
    let direct = sb.run(&[
        "webhook",
        "add",
        "pages",
        "--deliver",
        "telegram",
        "--deliver-chat-id",
        "4242",
        "--deliver-only",
        "--prompt",
        "Page: {service} is {state}",
    ]);
    assert!(direct.status.success(), "{}", stderr(&direct));
    let direct_secret = printed_secret(&stdout(&direct));
    sb.mock.push(Reply::text("Hi there."));
    sb.mock.push(Reply::text("Deploy of api went fine."));
    let _gw = support::telegram::ChatGateway::start(&sb, &[("TELEGRAM_ALLOWED_USERS", "4242")]);
    tg.wait_for(4242, "the chat's own answer", |t| t.contains("Hi there."));
    wait_until("the webhook listener", || {
        http_try(port, "GET", "/health", &[], "").map_or(0, |a| a.0) == 200
    });
    let (status, _) = post_github(
        port,
        "deploys",
        &secret,
        "deploy",
        "dep-1",
        &json!({"service": "api"}),
    );
    assert_eq!(status, 202);
    tg.wait_for(4242, "the agent's answer", |t| {
        t.contains("Deploy of api went fine.")
    });
    let (status, reply) = post_github(
        port,
        "pages",
        &direct_secret,
        "alert",
        "page-1",
        &json!({"service": "db", "state": "down"}),
    );
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["status"], "delivered");
    tg.wait_for(4242, "the direct message", |t| t == "Page: db is down");
    assert_eq!(sb.requests().len(), 2, "a direct delivery asks no model");
}

#[test]
fn subscribe_refuses_what_it_cannot_carry_out() {
    let sb = Sandbox::start();
    let off = sb.run(&["webhook", "list"]);
    assert_eq!(off.status.code(), Some(1));
    assert!(
        stderr(&off).contains("webhook platform is not enabled"),
        "{}",
        stderr(&off)
    );
    enable(&sb, free_port(), "");
    let bad = sb.run(&["webhook", "subscribe", "x/y"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("Invalid name 'x/y'"));
    let log_only = sb.run(&["webhook", "subscribe", "a", "--deliver-only"]);
    assert_eq!(log_only.status.code(), Some(1));
    assert!(stderr(&log_only).contains("--deliver-only requires --deliver"));
    let none = stdout(&sb.run(&["webhook", "list"]));
    assert!(none.contains("No dynamic webhook subscriptions."), "{none}");
}

#[test]
fn a_delivery_taken_before_a_kill_is_answered_once_after_the_restart() {
    let sb = Sandbox::start();
    let port = free_port();
    enable(
        &sb,
        port,
        "      routes:\n        jobs:\n          secret: s\n          prompt: \"Run job {job}\"\n",
    );
    sb.mock
        .push(Reply::text("Lost in the crash.").with_delay(Duration::from_secs(5)));
    let mut gw = start(&sb, port);
    let body = json!({"job": "nightly"});
    let (status, _) = post_github(port, "jobs", "s", "push", "job-1", &body);
    assert_eq!(status, 202);
    wait_until("the model request", || !sb.requests().is_empty());
    // kill -9 while the agent works: the sender already has its 202.
    gw.child.kill().unwrap();
    gw.child.wait().unwrap();
    sb.mock
        .push(Reply::text("Nightly job done after the restart."));
    let _gw2 = start(&sb, port);
    let log_path = sb.home.path().join("logs/gateway.log");
    wait_until("the answer after the restart", || {
        std::fs::read_to_string(&log_path)
            .unwrap_or_default()
            .contains("Nightly job done after the restart.")
    });
    // The sender's retry of the same delivery is still known after the restart.
    let (status, reply) = post_github(port, "jobs", "s", "push", "job-1", &body);
    assert_eq!((status, reply["status"].as_str()), (200, Some("duplicate")));
    std::thread::sleep(Duration::from_millis(500));
    let requests = sb.requests();
    assert_eq!(requests.len(), 2, "asked once per gateway life");
    assert_eq!(user_text(&requests[1]), "Run job nightly");
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(log.matches("'jobs' answered").count(), 1, "{log}");
}

#[test]
fn a_route_with_skills_runs_with_them_loaded() {
    let sb = Sandbox::start();
    let port = free_port();
    enable(&sb, port, "");
    let skill = sb.home.path().join("skills/review-guide");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: review-guide\ndescription: How we review pull requests\n---\n\nAlways check the CHANGELOG-ZEBRA entry first.\n",
    )
    .unwrap();
    let made = sb.run(&[
        "webhook",
        "subscribe",
        "prs",
        "--skills",
        "review-guide,not-a-skill",
        "--prompt",
        "Review PR {number}",
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let secret = printed_secret(&stdout(&made));
    sb.mock.push(Reply::text("Reviewed."));
    let _gw = start(&sb, port);
    let (status, _) = post_github(
        port,
        "prs",
        &secret,
        "pull_request",
        "pr-1",
        &json!({"number": 7}),
    );
    assert_eq!(status, 202);
    wait_until("the model request", || !sb.requests().is_empty());
    let request = sb.requests()[0].to_string();
    assert!(
        request.contains("CHANGELOG-ZEBRA"),
        "the skill was loaded: {request}"
    );
    assert!(request.contains("Review PR 7"));
}
