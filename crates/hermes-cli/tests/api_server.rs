//! `hermes gateway run` as OpenAI clients use it, over raw HTTP: keys, limits,
//! bad input, streaming, disconnects, the run cap, CORS, restarts, `--replace`
//! and SIGTERM. Real third-party clients are in `api_clients.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::gateway::*;
use support::*;

#[test]
fn health_needs_no_key_and_everything_else_does() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    let (status, headers, body) = http_try(gw.port, "GET", "/health", &[], "").unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["status"],
        "ok"
    );
    assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
    for path in [
        "/v1/models",
        "/v1/capabilities",
        "/health/detailed",
        "/api/sessions",
    ] {
        let (status, _, body) = http_try(gw.port, "GET", path, &[], "").unwrap();
        assert_eq!(status, 401, "{path}");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"]["code"], "invalid_api_key");
        let (status, _, _) = http_try(
            gw.port,
            "GET",
            path,
            &[("Authorization", "Bearer nope")],
            "",
        )
        .unwrap();
        assert_eq!(status, 401, "{path}");
    }
    let (k, v) = auth();
    let (status, _, body) = http_try(gw.port, "GET", "/v1/models", &[(k, &v)], "").unwrap();
    assert_eq!(status, 200);
    let models: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(models["data"][0]["id"], "hermes-agent");
    let (status, _, body) = http_try(gw.port, "GET", "/v1/nothing", &[(k, &v)], "").unwrap();
    assert_eq!(status, 404);
    assert!(body.contains("\"error\""));
}

#[test]
fn bad_input_gets_openai_errors() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    let (k, v) = auth();
    let path = "/v1/chat/completions";
    let (status, _, body) = http_try(gw.port, "POST", path, &[(k, &v)], "{not json").unwrap();
    assert_eq!(status, 400);
    assert!(body.contains("Invalid JSON in request body"), "{body}");
    let (status, _, body) = post(&gw, path, &json!({"model": "x"}));
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["message"],
        "Missing or invalid 'messages' field"
    );
    assert_eq!(body["error"]["type"], "invalid_request_error");
    let (status, _, body) = post(
        &gw,
        path,
        &json!({"messages": [{"role": "system", "content": "x"}]}),
    );
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["message"],
        "No user message found in messages"
    );
    let (status, _, body) = post(&gw, "/v1/responses", &json!({"model": "x"}));
    assert_eq!(status, 400);
    assert_eq!(body["error"]["message"], "Missing 'input' field");
    let (status, _, body) = post(
        &gw,
        "/v1/responses",
        &json!({"input": "x", "previous_response_id": "resp_nope"}),
    );
    assert_eq!(status, 404);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("resp_nope")
    );
    let big = format!(
        "{{\"messages\": [{{\"role\": \"user\", \"content\": \"{}\"}}]}}",
        "x".repeat(10_100_000)
    );
    let (status, _, body) = http_try(gw.port, "POST", path, &[(k, &v)], &big).unwrap();
    assert_eq!(status, 413, "{}", &body[..body.len().min(200)]);
    // An unknown model name still answers with the configured model, echoed back.
    sb.mock.push(Reply::text("fine"));
    let (status, headers, body) = post(
        &gw,
        path,
        &json!({"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}]}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["model"], "no-such-model");
    assert_eq!(body["choices"][0]["message"]["content"], "fine");
    assert!(header(&headers, "x-hermes-session-id").is_some_and(|id| id.starts_with("api-")));
}

#[test]
fn a_streamed_chat_runs_tools_server_side_and_ends_with_usage_and_done() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    std::fs::write(sb.work_path("notes.txt"), "secret plans\n").unwrap();
    sb.mock.push(Reply::tool_call(
        "call_1",
        "read_file",
        &json!({"path": sb.work_path("notes.txt")}).to_string(),
    ));
    sb.mock.push(Reply::text("The notes say: secret plans"));
    let (status, headers, body) = post(
        &gw,
        "/v1/chat/completions",
        &json!({"stream": true, "messages": [
            {"role": "system", "content": "Be terse."},
            {"role": "user", "content": "what do my notes say?"}
        ]}),
    );
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), Some("text/event-stream"));
    let text = body.as_str().unwrap().to_owned();
    let data: Vec<Value> = text
        .split("\n\n")
        .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(data[0]["choices"][0]["delta"]["role"], "assistant");
    let content: String = data
        .iter()
        .filter(|c| c["object"] == "chat.completion.chunk")
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "The notes say: secret plans");
    assert!(text.contains("event: hermes.tool.progress"), "{text}");
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let last = data
        .iter()
        .rev()
        .find(|c| c.get("usage").is_some())
        .unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    // The tool ran here; the model saw its result; the client system text was sent.
    let requests = sb.requests();
    let tool = tool_content(messages_with_role(&requests[1], "tool")[0]);
    assert!(tool.to_string().contains("secret plans"), "{tool}");
    let system = requests[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.ends_with("Be terse."), "{system}");
    // Stored in state.db with source api_server.
    let db = hermes_state::SessionDb::open_read_only(&sb.home.path().join("state.db")).unwrap();
    let sessions = db
        .list_sessions(&hermes_state::ListFilter::default())
        .unwrap();
    assert!(
        sessions.iter().any(|s| s.source == "api_server"),
        "{sessions:?}"
    );
}

#[test]
fn dangerous_commands_are_refused_with_a_clear_result() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    std::fs::create_dir_all(sb.work_path("build")).unwrap();
    sb.mock.push(Reply::tool_call(
        "call_1",
        "terminal",
        &json!({"command": format!("rm -rf {}", sb.work_path("build").display())}).to_string(),
    ));
    sb.mock.push(Reply::text("could not"));
    let (status, _, _) = post(
        &gw,
        "/v1/chat/completions",
        &json!({"messages": [{"role": "user", "content": "clean"}]}),
    );
    assert_eq!(status, 200);
    assert!(sb.work_path("build").exists(), "nobody approved it");
    let result = tool_content(messages_with_role(&sb.requests()[1], "tool")[0]);
    assert!(
        result.to_string().to_lowercase().contains("approv")
            || result.to_string().contains("refused")
            || result.to_string().contains("denied"),
        "{result}"
    );
}

#[test]
fn a_client_that_disconnects_mid_stream_cancels_its_run() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    sb.mock.push(
        Reply::text("one two three four five six seven eight")
            .with_chunk_delay(Duration::from_millis(400)),
    );
    let (k, v) = auth();
    let mut stream = TcpStream::connect(("127.0.0.1", gw.port)).unwrap();
    let body =
        json!({"stream": true, "messages": [{"role": "user", "content": "long"}]}).to_string();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n{k}: {v}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut first = [0u8; 64];
    let _ = stream.read(&mut first).unwrap();
    drop(stream);
    // The run stops: the gateway reports no run in flight shortly after.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (_, _, detail) = http_try(gw.port, "GET", "/health/detailed", &[(k, &v)], "").unwrap();
        let detail: Value = serde_json::from_str(&detail).unwrap();
        if detail["active_runs"] == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the run kept going: {detail}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The session is consistent: the next request on the same conversation works.
    sb.mock.push(Reply::text("still here"));
    let (status, _, body) = post(
        &gw,
        "/v1/chat/completions",
        &json!({"messages": [{"role": "user", "content": "long"}]}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["choices"][0]["message"]["content"], "still here");
}

#[test]
fn runs_past_the_cap_get_429() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "gateway:\n  api_server:\n    max_concurrent_runs: 1\n");
    sb.mock
        .push(Reply::text("slow answer").with_delay(Duration::from_millis(1500)));
    let slow = chat_in_background(gw.port, "slow");
    std::thread::sleep(Duration::from_millis(400));
    let (status, headers, body) = post(
        &gw,
        "/v1/chat/completions",
        &json!({"messages": [{"role": "user", "content": "fast"}]}),
    );
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"]["type"], "rate_limit_error");
    assert_eq!(header(&headers, "retry-after"), Some("1"));
    assert_eq!(slow.join().unwrap().0, 200);
}

#[test]
fn cors_allows_configured_origins_only() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "      cors_origins: [\"http://app.example\"]\n");
    let (k, v) = auth();
    let evil = [(k, v.as_str()), ("Origin", "http://evil.example")];
    let (status, headers, body) = http_try(gw.port, "GET", "/v1/models", &evil, "").unwrap();
    assert_eq!((status, body.as_str()), (403, ""));
    assert!(header(&headers, "access-control-allow-origin").is_none());
    let app = [("Origin", "http://app.example")];
    let (status, headers, _) =
        http_try(gw.port, "OPTIONS", "/v1/chat/completions", &app, "").unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "access-control-allow-origin"),
        Some("http://app.example")
    );
    let app = [(k, v.as_str()), ("Origin", "http://app.example")];
    let (status, headers, _) = http_try(gw.port, "GET", "/v1/models", &app, "").unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "access-control-allow-origin"),
        Some("http://app.example")
    );
    assert_eq!(header(&headers, "x-frame-options"), Some("DENY"));
}

#[test]
fn stored_responses_survive_a_restart() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    sb.mock.push(Reply::text("kept"));
    let (status, _, first) = post(&gw, "/v1/responses", &json!({"input": "keep this"}));
    assert_eq!(status, 200, "{first}");
    let id = first["id"].as_str().unwrap().to_owned();
    assert_eq!(
        first["output"].as_array().unwrap().last().unwrap()["content"][0]["text"],
        "kept"
    );
    let port = gw.port;
    drop(gw);
    // Same home, a new process on the same port.
    let gw = spawn(&sb, port, &[]);
    wait_healthy(port);
    let (k, v) = auth();
    let (status, _, body) = http_try(
        gw.port,
        "GET",
        &format!("/v1/responses/{id}"),
        &[(k, &v)],
        "",
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    sb.mock.push(Reply::text("chained"));
    let (status, _, second) = post(
        &gw,
        "/v1/responses",
        &json!({"input": "more", "previous_response_id": id}),
    );
    assert_eq!(status, 200, "{second}");
    let last = sb.requests().pop().unwrap();
    assert!(last.to_string().contains("keep this"), "{last}");
}

#[test]
fn a_weak_key_refuses_to_start_and_says_how_to_fix_it() {
    let sb = Sandbox::start();
    sb.add_config("platforms:\n  api_server:\n    enabled: true\n");
    let out = sb
        .command()
        .args(["gateway", "run"])
        .env("API_SERVER_KEY", "changeme")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("openssl rand -hex 32"),
        "{}",
        stderr(&out)
    );
    let out = sb.command().args(["gateway", "status"]).output().unwrap();
    assert!(stdout(&out).contains("not running"), "{}", stdout(&out));
}

#[test]
fn api_sessions_list_get_messages_fork_chat_delete() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    let (status, _, created) = post(&gw, "/api/sessions", &json!({"id": "s-1", "title": "Mine"}));
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["session"]["id"], "s-1");
    sb.mock.push(Reply::text("hello from s-1"));
    let (status, headers, chat) = post(&gw, "/api/sessions/s-1/chat", &json!({"message": "hi"}));
    assert_eq!(status, 200, "{chat}");
    assert_eq!(chat["message"]["content"], "hello from s-1");
    assert_eq!(header(&headers, "x-hermes-session-id"), Some("s-1"));
    let (k, v) = auth();
    let (_, _, messages) =
        http_try(gw.port, "GET", "/api/sessions/s-1/messages", &[(k, &v)], "").unwrap();
    let messages: Value = serde_json::from_str(&messages).unwrap();
    let roles: Vec<&str> = messages["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    let (status, _, fork) = post(&gw, "/api/sessions/s-1/fork", &json!({"id": "s-2"}));
    assert_eq!(status, 201, "{fork}");
    assert_eq!(fork["session"]["parent_session_id"], "s-1");
    assert_eq!(fork["session"]["message_count"], 2);
    let (_, _, list) = http_try(
        gw.port,
        "GET",
        "/api/sessions?include_children=true",
        &[(k, &v)],
        "",
    )
    .unwrap();
    assert!(
        list.contains("\"s-1\"") && list.contains("\"s-2\""),
        "{list}"
    );
    // A second turn on s-1 carries the first.
    sb.mock.push(Reply::text("again"));
    post(&gw, "/api/sessions/s-1/chat", &json!({"message": "more"}));
    let last = sb.requests().pop().unwrap();
    assert_eq!(messages_with_role(&last, "user").len(), 2);
    let (status, _, deleted) =
        http_try(gw.port, "DELETE", "/api/sessions/s-2", &[(k, &v)], "").unwrap();
    assert_eq!(status, 200, "{deleted}");
    let (status, _, _) = http_try(gw.port, "GET", "/api/sessions/s-2", &[(k, &v)], "").unwrap();
    assert_eq!(status, 404);
}

#[test]
fn one_gateway_per_home_and_replace_takes_over() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    let second = sb
        .command()
        .args(["gateway", "run"])
        .env("API_SERVER_KEY", KEY)
        .output()
        .unwrap();
    assert!(!second.status.success());
    assert!(
        stderr(&second).contains("already running"),
        "{}",
        stderr(&second)
    );
    let status = sb.command().args(["gateway", "status"]).output().unwrap();
    assert!(
        stdout(&status).contains("running (pid"),
        "{}",
        stdout(&status)
    );
    let port = gw.port;
    let mut old = gw;
    // (Dropped at the end: it has exited by then, so nothing is signalled.)
    let new = spawn(&sb, port, &["--replace"]);
    // The old process drained and exited; the new one serves the same port.
    let deadline = Instant::now() + Duration::from_secs(30);
    while old.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the old gateway kept running");
        std::thread::sleep(Duration::from_millis(50));
    }
    wait_healthy(new.port);
}

#[test]
fn sigterm_lets_a_run_in_flight_finish() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    sb.mock
        .push(Reply::text("finished after all").with_delay(Duration::from_millis(1200)));
    let run = chat_in_background(gw.port, "slow");
    std::thread::sleep(Duration::from_millis(400));
    let mut gw = gw;
    Command::new("kill")
        .arg(gw.child.id().to_string())
        .status()
        .unwrap();
    let (status, _, body) = run.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("finished after all"), "{body}");
    let exited = gw.child.wait().unwrap();
    assert!(exited.success(), "{exited:?}");
}

#[test]
fn install_writes_a_systemd_user_unit_for_this_home() {
    let sb = Sandbox::start();
    let config_home = sb.home.path().join("xdg");
    let out = sb
        .command()
        .args(["gateway", "install", "--no-enable"])
        .env("XDG_CONFIG_HOME", &config_home)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let unit =
        std::fs::read_to_string(config_home.join("systemd/user/hermes-gateway.service")).unwrap();
    assert!(unit.contains("gateway run --replace"), "{unit}");
    assert!(
        unit.contains(&format!("HERMES_HOME={}", sb.home.path().display())),
        "{unit}"
    );
    assert!(unit.contains("KillSignal=SIGTERM"), "{unit}");
    assert!(
        stdout(&out).contains("systemctl --user"),
        "{}",
        stdout(&out)
    );
}
