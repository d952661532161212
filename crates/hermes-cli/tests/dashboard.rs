//! `hermes dashboard` through its HTTP API, as its page uses it: the
//! security rules (CSRF, Host, login token, refusal to bind off loopback
//! without one), a chat with streamed answers and an approval, sessions
//! (search, transcript, rename, export, delete), usage, cron, and config/.env
//! edits that land in the files. The browser tests (dashboard_browser.rs)
//! drive the same page in Chromium.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::dashboard::start;
use support::gateway::http_try;
use support::*;

fn is(event: &Value, kind: &str) -> bool {
    event["type"] == kind
}

#[test]
fn changes_need_the_pages_token_and_the_host_must_be_this_machine() {
    let sb = Sandbox::start();
    let dash = start(&sb, &[]);
    let (status, headers, page) = http_try(dash.port, "GET", "/", &[], "").unwrap();
    assert_eq!(status, 200);
    let csp = headers
        .iter()
        .find(|(k, _)| k == "content-security-policy")
        .map(|(_, v)| v.clone())
        .unwrap();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"));
    assert!(!page.contains("<script>"), "no inline script");

    let body = json!({"key": "agent.max_turns", "value": "7"}).to_string();
    let json_type = ("Content-Type", "application/json");
    let (no_token, _, said) =
        http_try(dash.port, "POST", "/api/config", &[json_type], &body).unwrap();
    assert_eq!(no_token, 403, "{said}");
    let (other_origin, _, _) = http_try(
        dash.port,
        "POST",
        "/api/config",
        &[
            json_type,
            ("X-CSRF-Token", &dash.csrf),
            ("Origin", "http://evil.example"),
        ],
        &body,
    )
    .unwrap();
    assert_eq!(other_origin, 403);
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(
        !config.contains("max_turns"),
        "refused changes write nothing"
    );
    let (ok, _) = dash.send(
        "POST",
        "/api/config",
        &json!({"key": "agent.max_turns", "value": "7"}),
    );
    assert_eq!(ok, 200);

    // A page on another name that resolves here (DNS rebinding) is refused.
    use std::io::{Read, Write};
    let mut raw = std::net::TcpStream::connect(("127.0.0.1", dash.port)).unwrap();
    raw.write_all(
        b"GET /api/overview HTTP/1.1\r\nHost: attacker.example:9119\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut answer = String::new();
    raw.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 421"), "{answer}");
}

#[test]
fn off_loopback_a_login_token_is_required() {
    let sb = Sandbox::start();
    let refused = sb.run(&[
        "dashboard",
        "--host",
        "0.0.0.0",
        "--port",
        &free_port().to_string(),
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("without a login token")
            && stderr(&refused).contains("--new-token"),
        "{}",
        stderr(&refused)
    );
    let made = sb.run(&["dashboard", "--new-token"]);
    assert!(made.status.success());
    let env = std::fs::read_to_string(sb.home.path().join(".env")).unwrap();
    let token = env
        .lines()
        .find_map(|l| l.strip_prefix("HERMES_DASHBOARD_TOKEN="))
        .unwrap()
        .to_owned();
    assert!(stdout(&made).contains(&token));

    // With a token the API needs the login's cookie, on any bind.
    let port = free_port();
    let _child = support::gateway::Gateway {
        child: sb
            .command()
            .args(["dashboard", "--port", &port.to_string()])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
        port,
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while http_try(port, "GET", "/login", &[], "").map_or(0, |a| a.0) != 200 {
        assert!(std::time::Instant::now() < deadline);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (denied, _, _) = http_try(port, "GET", "/api/overview", &[], "").unwrap();
    assert_eq!(denied, 401);
    let form = ("Content-Type", "application/x-www-form-urlencoded");
    let (wrong, _, _) = http_try(port, "POST", "/login", &[form], "token=nope").unwrap();
    assert_eq!(wrong, 401);
    let (ok, headers, _) =
        http_try(port, "POST", "/login", &[form], &format!("token={token}")).unwrap();
    assert_eq!(ok, 303);
    let cookie = headers
        .iter()
        .find(|(k, _)| k == "set-cookie")
        .map(|(_, v)| v.split(';').next().unwrap().to_owned())
        .unwrap();
    let (allowed, _, _) =
        http_try(port, "GET", "/api/overview", &[("Cookie", &cookie)], "").unwrap();
    assert_eq!(allowed, 200);
}

#[test]
fn a_chat_streams_its_answer_and_waits_for_the_approval_buttons() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("Hello from the dashboard."));
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        &json!({"command": "rm -rf ./build"}).to_string(),
    ));
    sb.mock.push(Reply::text("I did not delete it."));
    let dash = start(&sb, &[]);
    let (status, chat) = dash.send("POST", "/api/chat", &json!({}));
    assert_eq!(status, 200, "{chat}");
    let id = chat["chat_id"].as_str().unwrap().to_owned();
    let session = chat["session_id"].as_str().unwrap().to_owned();

    dash.send(
        "POST",
        &format!("/api/chat/{id}/send"),
        &json!({"text": "hi"}),
    );
    let (events, last) = dash.events_until(&id, 0, |e| is(e, "turn_complete"));
    let text: String = events
        .iter()
        .filter(|e| is(e, "text"))
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(text, "Hello from the dashboard.");

    dash.send(
        "POST",
        &format!("/api/chat/{id}/send"),
        &json!({"text": "clean the build"}),
    );
    let (events, last) = dash.events_until(&id, last, |e| is(e, "approval"));
    let approval = events.last().unwrap();
    assert!(approval["command"].as_str().unwrap().contains("rm -rf"));
    let (status, _) = dash.send(
        "POST",
        &format!("/api/chat/{id}/approval"),
        &json!({"request_id": approval["request_id"], "choice": "deny"}),
    );
    assert_eq!(status, 200);
    let (events, _) = dash.events_until(&id, last, |e| is(e, "turn_complete"));
    let finished = events.iter().find(|e| is(e, "tool_finished")).unwrap();
    assert!(
        finished["result"]
            .as_str()
            .unwrap()
            .contains("BLOCKED: the user denied"),
        "{finished}"
    );

    // Both turns are in the session, which the sessions page then shows.
    let (_, shown) = dash.get(&format!("/api/sessions/{session}"));
    assert_eq!(shown["session"]["source"], "dashboard");
    let roles: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert!(roles.contains(&"tool"), "{roles:?}");
}

#[test]
fn sessions_are_searched_opened_renamed_exported_and_deleted() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("The deploy finished."));
    let out = sb.chat("how did the kubernetes deploy go?", &[]);
    let id = session_id_of(&out);
    let dash = start(&sb, &[]);

    let (_, listed) = dash.get("/api/sessions?limit=10");
    assert_eq!(listed["sessions"][0]["id"], id.as_str());
    assert_eq!(listed["has_more"], false);

    let (_, found) = dash.get("/api/sessions/search?q=kubernetes");
    let hit = &found["results"][0];
    assert_eq!(hit["session_id"], id.as_str());
    assert!(
        hit["parts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["hit"] == true
                && p["text"]
                    .as_str()
                    .unwrap()
                    .eq_ignore_ascii_case("kubernetes")),
        "{hit}"
    );

    let (status, _) = dash.send(
        "PATCH",
        &format!("/api/sessions/{id}"),
        &json!({"title": "Deploy check"}),
    );
    assert_eq!(status, 200);
    let (_, shown) = dash.get(&format!("/api/sessions/{id}"));
    assert_eq!(shown["session"]["title"], "Deploy check");

    let (status, headers, md) = http_try(
        dash.port,
        "GET",
        &format!("/api/sessions/{id}/export?format=md"),
        &[],
        "",
    )
    .unwrap();
    assert_eq!(status, 200);
    assert!(
        md.starts_with("# Deploy check") && md.contains("The deploy finished."),
        "{md}"
    );
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "content-disposition" && v.contains(".md"))
    );
    let (_, _, jsonl) = http_try(
        dash.port,
        "GET",
        &format!("/api/sessions/{id}/export?format=jsonl"),
        &[],
        "",
    )
    .unwrap();
    let line: Value = serde_json::from_str(jsonl.trim()).unwrap();
    assert_eq!(line["id"], id.as_str());

    let (_, usage) = dash.get("/api/usage?days=7");
    assert_eq!(usage["days"].as_array().unwrap().len(), 7);
    let sessions_today = usage["days"][6]["sessions"].as_i64().unwrap();
    assert!(sessions_today >= 1, "{usage}");
    assert_eq!(usage["models"][0]["model"], "mock-model");

    let (status, _) = dash.send("DELETE", &format!("/api/sessions/{id}"), &json!({}));
    assert_eq!(status, 200);
    let (gone, _) = dash.get(&format!("/api/sessions/{id}"));
    assert_eq!(gone, 404);
}

#[test]
fn cron_jobs_are_added_run_read_and_removed() {
    let sb = Sandbox::start();
    let dash = start(&sb, &[]);
    let (status, made) = dash.send(
        "POST",
        "/api/cron",
        &json!({"schedule": "every 2h", "prompt": "Say hello", "name": "greeter"}),
    );
    assert_eq!(status, 200, "{made}");
    let id = made["job"]["id"].as_str().unwrap().to_owned();
    let (bad, said) = dash.send(
        "POST",
        "/api/cron",
        &json!({"schedule": "whenever", "prompt": "x"}),
    );
    assert_eq!(bad, 400, "{said}");

    sb.mock.push(Reply::text("Hello from cron."));
    let (_, ran) = dash.send("POST", &format!("/api/cron/{id}/run"), &json!({}));
    assert_eq!(ran["ok"], true, "{ran}");
    let (_, runs) = dash.get(&format!("/api/cron/{id}/runs"));
    let run = runs["runs"][0]["run"].as_str().unwrap().to_owned();
    assert_eq!(runs["runs"][0]["ok"], true);
    let (_, output) = dash.get(&format!("/api/cron/{id}/runs/{run}"));
    assert!(
        output["text"]
            .as_str()
            .unwrap()
            .contains("Hello from cron.")
    );

    let (_, paused) = dash.send("POST", &format!("/api/cron/{id}/pause"), &json!({}));
    assert_eq!(paused["job"]["enabled"], false);
    // The CLI sees the same book.
    let listed = stdout(&sb.run(&["cron", "list", "--all"]));
    assert!(listed.contains("[paused]"), "{listed}");
    let (status, _) = dash.send("DELETE", &format!("/api/cron/{id}"), &json!({}));
    assert_eq!(status, 200);
    let (_, all) = dash.get("/api/cron");
    assert_eq!(all["jobs"].as_array().unwrap().len(), 0);
}

#[test]
fn config_and_env_edits_land_in_the_files_and_secrets_never_come_back() {
    let sb = Sandbox::start();
    let dash = start(&sb, &[]);
    let (status, set) = dash.send(
        "POST",
        "/api/config",
        &json!({"key": "display.compact", "value": "true"}),
    );
    assert_eq!(status, 200, "{set}");
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(config.contains("compact: true"), "{config}");
    let (refused, said) = dash.send(
        "POST",
        "/api/config",
        &json!({"key": "terminal.backend", "value": "modal"}),
    );
    assert_eq!(refused, 400);
    assert!(
        said["error"]
            .as_str()
            .unwrap()
            .contains("local, sandbox, ssh, docker")
    );
    let (_, typo) = dash.send(
        "POST",
        "/api/config",
        &json!({"key": "agent.max_turn", "value": "3"}),
    );
    assert!(
        typo["warnings"][0]
            .as_str()
            .unwrap()
            .contains("agent.max_turns"),
        "{typo}"
    );

    let secret = "sk-dashboard-secret-0123456789abcdef";
    let (status, _) = dash.send(
        "POST",
        "/api/env",
        &json!({"name": "OPENROUTER_API_KEY", "value": secret}),
    );
    assert_eq!(status, 200);
    let env = std::fs::read_to_string(sb.home.path().join(".env")).unwrap();
    assert!(env.contains(&format!("OPENROUTER_API_KEY={secret}")));
    let (_, _, shown) = http_try(dash.port, "GET", "/api/config", &[], "").unwrap();
    assert!(
        !shown.contains("0123456789abcdef"),
        "the value never reaches the page: {shown}"
    );
    assert!(shown.contains("OPENROUTER_API_KEY"));

    let (status, _) = dash.send("DELETE", "/api/env/OPENROUTER_API_KEY", &json!({}));
    assert_eq!(status, 200);
    assert!(
        !std::fs::read_to_string(sb.home.path().join(".env"))
            .unwrap()
            .contains(secret)
    );
    let (status, _) = dash.send("DELETE", "/api/config/display.compact", &json!({}));
    assert_eq!(status, 200);
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(!config.contains("compact"), "{config}");
}

#[test]
fn the_gateway_page_shows_each_platforms_live_state_and_pairing() {
    let Some(tg) = support::telegram::Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    support::telegram::configure(&sb, &tg, "");
    let _gw = support::telegram::ChatGateway::start(&sb, &[]);
    // A stranger asks to pair: a code is issued to them, which the owner types in.
    tg.user_says(777, "let me in");
    let code_message = tg.wait_for(777, "a pairing code", |t| t.contains("pairing code"));
    let dash = start(&sb, &[]);
    let (_, shown) = dash.get("/api/gateway");
    assert_eq!(shown["running"], true, "{shown}");
    let telegram = &shown["platforms"][0];
    assert_eq!(telegram["name"], "telegram");
    assert_eq!(telegram["state"], "connected", "{shown}");
    assert!(telegram["last_message_at"].is_string(), "{shown}");
    let pending = &shown["pairing"]["pending"][0];
    assert_eq!(pending["user_id"], "777", "{shown}");
    let text = code_message["text"].as_str().unwrap().replace('\\', "");
    let code = text
        .split("hermes pairing approve telegram ")
        .nth(1)
        .unwrap()
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned();
    let (status, approved) = dash.send(
        "POST",
        "/api/gateway/pairing/approve",
        &json!({"platform": "telegram", "code": code}),
    );
    assert_eq!(status, 200, "{approved}");
    let (_, shown) = dash.get("/api/gateway");
    assert_eq!(shown["pairing"]["approved"][0]["user_id"], "777", "{shown}");
    let (status, _) = dash.send(
        "POST",
        "/api/gateway/pairing/revoke",
        &json!({"platform": "telegram", "user_id": "777"}),
    );
    assert_eq!(status, 200);
}

#[test]
fn a_clarify_question_waits_for_the_pages_answer() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "q1",
        "clarify",
        &json!({"question": "Which color?", "choices": ["red", "blue"]}).to_string(),
    ));
    sb.mock.push(Reply::text("Blue it is."));
    let dash = start(&sb, &[]);
    let (_, chat) = dash.send("POST", "/api/chat", &json!({}));
    let id = chat["chat_id"].as_str().unwrap().to_owned();
    dash.send(
        "POST",
        &format!("/api/chat/{id}/send"),
        &json!({"text": "paint it"}),
    );
    let (events, last) = dash.events_until(&id, 0, |e| is(e, "clarify"));
    let question = events.last().unwrap();
    assert_eq!(question["question"], "Which color?");
    assert_eq!(question["choices"], json!(["red", "blue"]));
    dash.send(
        "POST",
        &format!("/api/chat/{id}/clarify"),
        &json!({"request_id": question["request_id"], "answer": "blue"}),
    );
    let (events, _) = dash.events_until(&id, last, |e| is(e, "turn_complete"));
    assert_eq!(events.last().unwrap()["final_text"], "Blue it is.");
    let sent = sb.requests().last().unwrap().to_string();
    assert!(
        sent.contains("blue"),
        "the answer reached the model: {sent}"
    );
}

#[test]
fn the_stop_button_interrupts_and_the_model_can_be_switched() {
    let sb = Sandbox::start();
    sb.mock.push(
        Reply::text("a long answer that never quite ends")
            .with_delay(std::time::Duration::from_secs(30)),
    );
    sb.mock.push(Reply::text("From the other model."));
    let dash = start(&sb, &[]);
    let (_, chat) = dash.send("POST", "/api/chat", &json!({}));
    let id = chat["chat_id"].as_str().unwrap().to_owned();
    dash.send(
        "POST",
        &format!("/api/chat/{id}/send"),
        &json!({"text": "go on"}),
    );
    // Give the request time to reach the model, then press Stop.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sb.mock.chat_requests().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the turn never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (status, _) = dash.send("POST", &format!("/api/chat/{id}/interrupt"), &json!({}));
    assert_eq!(status, 200);
    let (events, last) = dash.events_until(&id, 0, |e| is(e, "turn_complete") || is(e, "error"));
    let end = events.last().unwrap();
    assert!(
        end["reason"]
            .as_str()
            .is_some_and(|r| r.contains("Interrupt"))
            || is(end, "error"),
        "{end}"
    );

    let (status, _) = dash.send(
        "POST",
        &format!("/api/chat/{id}/model"),
        &json!({"model": "other-model"}),
    );
    assert_eq!(status, 200);
    let (events, last) = dash.events_until(&id, last, |e| is(e, "model_changed") || is(e, "error"));
    assert_eq!(events.last().unwrap()["model"], "other-model", "{events:?}");
    dash.send(
        "POST",
        &format!("/api/chat/{id}/send"),
        &json!({"text": "and now?"}),
    );
    dash.events_until(&id, last, |e| is(e, "turn_complete"));
    let asked = sb.mock.chat_requests();
    assert_eq!(asked.last().unwrap()["model"], "other-model");
}

#[test]
fn status_stop_and_the_skills_mcp_and_logs_pages() {
    let sb = Sandbox::start();
    let skill = sb.home.path().join("skills/notes/jot");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: jot\ndescription: Write short notes.\n---\n# Jot\nKeep it short.\n",
    )
    .unwrap();
    sb.add_config("mcp_servers:\n  off:\n    command: /nonexistent/server\n    enabled: false\n");
    std::fs::create_dir_all(sb.home.path().join("logs")).unwrap();
    std::fs::write(
        sb.home.path().join("logs/agent.log"),
        "2026-11-28 10:00:00,000 INFO [s] agent: fine\n2026-11-28 10:00:01,000 ERROR [s] agent: broken\n  → the fix\n",
    )
    .unwrap();
    let mut dash = start(&sb, &[]);
    let status = sb.run(&["dashboard", "--status"]);
    assert!(
        stdout(&status).contains(&format!("running (pid {})", dash.child.id())),
        "{}",
        stdout(&status)
    );

    let (_, skills) = dash.get("/api/skills");
    assert!(
        skills["skills"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "jot"),
        "{skills}"
    );
    let (_, jot) = dash.get("/api/skills/jot");
    assert!(jot["content"].as_str().unwrap().contains("Keep it short."));
    let (_, mcp) = dash.get("/api/mcp");
    assert_eq!(mcp["servers"][0]["name"], "off");
    assert_eq!(mcp["servers"][0]["status"], "disabled", "{mcp}");
    let (_, logs) = dash.get("/api/logs/agent?level=ERROR");
    assert_eq!(
        logs["lines"],
        json!([
            "2026-11-28 10:00:01,000 ERROR [s] agent: broken",
            "  → the fix"
        ])
    );

    let stopped = sb.run(&["dashboard", "--stop"]);
    assert!(stopped.status.success(), "{}", stdout(&stopped));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while dash.child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the dashboard kept running"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(sb.run(&["dashboard", "--status"]).status.code(), Some(3));
}
