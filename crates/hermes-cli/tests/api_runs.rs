//! `/v1/runs` through `hermes gateway run` over raw HTTP: a run started in the
//! background, its events read as SSE, a reader that drops and comes back with
//! `Last-Event-ID`, stopping a slow tool, answering an approval, and
//! `Idempotency-Key`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::gateway::*;
use support::*;

/// What one SSE connection saw: `(id, event)` pairs, and whether the server
/// closed the stream (the run ended) rather than the reader leaving.
struct Seen {
    events: Vec<(u64, Value)>,
    closed: bool,
}

/// Reads `/v1/runs/{id}/events` from after `last_id` until the stream closes
/// or `until` says to leave (the connection is then dropped mid-run).
fn read_events(
    port: u16,
    run_id: &str,
    last_id: Option<u64>,
    until: impl Fn(&Value) -> bool,
) -> Seen {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let (k, v) = auth();
    let resume = last_id.map_or(String::new(), |id| format!("Last-Event-ID: {id}\r\n"));
    write!(
        stream,
        "GET /v1/runs/{run_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n{k}: {v}\r\n{resume}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut seen = Seen {
        events: Vec::new(),
        closed: false,
    };
    let mut id = None;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            return seen;
        }
        // Chunk-size lines of the chunked body are neither `id:` nor `data:`.
        let line = line.trim_end();
        if let Some(n) = line.strip_prefix("id: ") {
            id = Some(n.parse::<u64>().unwrap());
        } else if let Some(data) = line.strip_prefix("data: ") {
            let event: Value = serde_json::from_str(data).unwrap();
            seen.events
                .push((id.take().expect("every event has an id"), event.clone()));
            if until(&event) {
                return seen;
            }
        } else if line == ": stream closed" {
            seen.closed = true;
            return seen;
        }
    }
}

fn start_run(gw: &Gateway, body: &Value) -> String {
    let (status, _, answer) = post(gw, "/v1/runs", body);
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["status"], "started");
    answer["run_id"].as_str().unwrap().to_owned()
}

fn get_json(gw: &Gateway, path: &str) -> (u16, Value) {
    let (k, v) = auth();
    let (status, _, body) = http_try(gw.port, "GET", path, &[(k, &v)], "").unwrap();
    (
        status,
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
    )
}

fn names(events: &[(u64, Value)]) -> Vec<String> {
    events
        .iter()
        .map(|(_, e)| e["event"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_reader_that_reconnects_with_last_event_id_gets_every_event_once() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    std::fs::write(sb.work_path("notes.txt"), "forty two\n").unwrap();
    sb.mock.push(Reply::tool_call(
        "call_1",
        "read_file",
        &json!({"path": sb.work_path("notes.txt")}).to_string(),
    ));
    let answer = "The notes say the answer is forty two.";
    sb.mock
        .push(Reply::text(answer).with_chunk_delay(Duration::from_millis(250)));
    let run_id = start_run(&gw, &json!({"input": "what do my notes say?"}));
    assert!(run_id.starts_with("run_"));

    // Leave after the first answer text, while the rest still streams.
    let first = read_events(gw.port, &run_id, None, |e| e["event"] == "message.delta");
    assert!(!first.closed);
    let last = first.events.last().unwrap().0;
    let (status, run) = get_json(&gw, &format!("/v1/runs/{run_id}"));
    assert_eq!(status, 200);
    assert_eq!(run["object"], "hermes.run");
    assert_eq!(run["status"], "running", "{run}");
    std::thread::sleep(Duration::from_millis(400));

    let second = read_events(gw.port, &run_id, Some(last), |_| false);
    assert!(second.closed, "the stream ends with the run");
    let all: Vec<(u64, Value)> = first.events.into_iter().chain(second.events).collect();
    let seqs: Vec<u64> = all.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        seqs,
        (1..=all.len() as u64).collect::<Vec<_>>(),
        "each event once, in order"
    );
    let kinds = names(&all);
    assert_eq!(kinds[..2], ["tool.started", "tool.completed"], "{kinds:?}");
    assert_eq!(all[0].1["tool"], "read_file");
    assert_eq!(all[1].1["error"], false);
    assert_eq!(kinds.last().unwrap(), "run.completed");
    assert!(all.iter().all(|(_, e)| e["run_id"] == run_id.as_str()));
    let text: String = all
        .iter()
        .filter(|(_, e)| e["event"] == "message.delta")
        .map(|(_, e)| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, answer);
    assert_eq!(all.last().unwrap().1["output"], answer);

    let (_, run) = get_json(&gw, &format!("/v1/runs/{run_id}"));
    assert_eq!(run["status"], "completed");
    assert_eq!(run["output"], answer);
    assert_eq!(run["last_event"], "run.completed");
    // A finished run replays whole from the start, and nothing after its end.
    let again = read_events(gw.port, &run_id, None, |_| false);
    assert!(again.closed);
    assert_eq!(again.events, all);
    let tail = read_events(gw.port, &run_id, Some(seqs.len() as u64), |_| false);
    assert!(tail.closed && tail.events.is_empty());
    assert!(sb.home.path().join("runs.db").exists());
}

#[test]
fn stop_interrupts_a_run_inside_a_slow_tool() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    sb.mock.push(Reply::tool_call(
        "call_1",
        "terminal",
        &json!({"command": "sleep 30"}).to_string(),
    ));
    sb.mock.push(Reply::text("never sent"));
    let run_id = start_run(&gw, &json!({"input": "wait a while"}));
    let started = read_events(gw.port, &run_id, None, |e| e["event"] == "tool.started");
    assert_eq!(started.events.last().unwrap().1["tool"], "terminal");
    let t0 = Instant::now();
    let (status, _, body) = post(&gw, &format!("/v1/runs/{run_id}/stop"), &json!({}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"run_id": run_id, "status": "stopping"}));
    let rest = read_events(
        gw.port,
        &run_id,
        Some(started.events.last().unwrap().0),
        |_| false,
    );
    assert!(rest.closed);
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert_eq!(
        names(&rest.events).last().unwrap(),
        "run.cancelled",
        "{:?}",
        rest.events
    );
    let (_, run) = get_json(&gw, &format!("/v1/runs/{run_id}"));
    assert_eq!(run["status"], "cancelled");
    // A run that ended cannot be stopped again.
    let (status, _, body) = post(&gw, &format!("/v1/runs/{run_id}/stop"), &json!({}));
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], "run_not_found");
}

#[test]
fn a_dangerous_command_waits_for_approval_through_the_api() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    std::fs::create_dir_all(sb.work_path("build")).unwrap();
    let command = format!("rm -rf {}", sb.work_path("build").display());
    sb.mock.push(Reply::tool_call(
        "call_1",
        "terminal",
        &json!({"command": command}).to_string(),
    ));
    sb.mock.push(Reply::text("cleaned"));
    let run_id = start_run(&gw, &json!({"input": "clean the build"}));
    let (status, _, body) = post(
        &gw,
        &format!("/v1/runs/{run_id}/approval"),
        &json!({"choice": "maybe"}),
    );
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], "invalid_approval_choice");
    let asked = read_events(gw.port, &run_id, None, |e| e["event"] == "approval.request");
    let request = &asked.events.last().unwrap().1;
    assert_eq!(request["command"], command.as_str());
    assert_eq!(
        request["choices"],
        json!(["once", "session", "always", "deny"])
    );
    let (_, run) = get_json(&gw, &format!("/v1/runs/{run_id}"));
    assert_eq!(run["status"], "waiting_for_approval");
    assert!(sb.work_path("build").exists());

    let (status, _, body) = post(
        &gw,
        &format!("/v1/runs/{run_id}/approval"),
        &json!({"choice": "approve"}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["object"], "hermes.run.approval_response");
    assert_eq!(body["choice"], "once");
    assert_eq!(body["resolved"], 1);
    let rest = read_events(
        gw.port,
        &run_id,
        Some(asked.events.last().unwrap().0),
        |_| false,
    );
    assert!(rest.closed);
    let kinds = names(&rest.events);
    assert!(
        kinds.contains(&"approval.responded".to_owned()),
        "{kinds:?}"
    );
    assert_eq!(kinds.last().unwrap(), "run.completed");
    assert!(!sb.work_path("build").exists(), "the approved command ran");
    let (_, run) = get_json(&gw, &format!("/v1/runs/{run_id}"));
    assert_eq!(run["output"], "cleaned");
    let (status, _, body) = post(
        &gw,
        &format!("/v1/runs/{run_id}/approval"),
        &json!({"choice": "deny"}),
    );
    assert_eq!(status, 409);
    assert_eq!(body["error"]["code"], "approval_not_active");
}

#[test]
fn a_repeated_idempotency_key_returns_the_first_run() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    sb.mock.push(Reply::text("only once"));
    let (k, v) = auth();
    let body = json!({"input": "hello"}).to_string();
    let send = |key: &str, body: &str| {
        let (status, _, text) = http_try(
            gw.port,
            "POST",
            "/v1/runs",
            &[
                (k, &v),
                ("Content-Type", "application/json"),
                ("Idempotency-Key", key),
            ],
            body,
        )
        .unwrap();
        (status, serde_json::from_str::<Value>(&text).unwrap())
    };
    let (status, first) = send("key-1", &body);
    assert_eq!(status, 202, "{first}");
    let (status, again) = send("key-1", &body);
    assert_eq!(status, 202);
    assert_eq!(again, first);
    let (status, other) = send("key-1", &json!({"input": "something else"}).to_string());
    assert_eq!(status, 422, "{other}");
    assert_eq!(other["error"]["code"], "idempotency_key_reused");
    let run_id = first["run_id"].as_str().unwrap();
    let seen = read_events(gw.port, run_id, None, |_| false);
    assert_eq!(seen.events.last().unwrap().1["output"], "only once");
    assert_eq!(sb.mock.requests().len(), 1, "one run, one model call");
}

#[test]
fn runs_need_the_key_and_answer_errors_in_the_openai_shape() {
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    for (method, path) in [
        ("POST", "/v1/runs"),
        ("GET", "/v1/runs/run_x"),
        ("GET", "/v1/runs/run_x/events"),
        ("POST", "/v1/runs/run_x/approval"),
        ("POST", "/v1/runs/run_x/stop"),
    ] {
        let (status, _, body) = http_try(gw.port, method, path, &[], "{}").unwrap();
        assert_eq!(status, 401, "{method} {path}");
        assert!(body.contains("invalid_api_key"));
    }
    let (status, _, body) = post(&gw, "/v1/runs", &json!({"model": "x"}));
    assert_eq!(status, 400);
    assert_eq!(body["error"]["message"], "Missing 'input' field");
    let (status, _, body) = post(
        &gw,
        "/v1/runs",
        &json!({"input": "x", "conversation_history": "nope"}),
    );
    assert_eq!(status, 400, "{body}");
    for path in ["/v1/runs/run_nope", "/v1/runs/run_nope/events"] {
        let (status, body) = get_json(&gw, path);
        assert_eq!(status, 404, "{path}");
        assert_eq!(body["error"]["code"], "run_not_found");
        assert_eq!(body["error"]["type"], "invalid_request_error");
    }
}

/// Two API-server gateways on one PostgreSQL schema (`None`, the test
/// skipped, without a test database).
struct Replicas {
    _scratch: hermes_postgres::testing::Scratch,
    sb_a: Sandbox,
    sb_b: Sandbox,
    a: Gateway,
    b: Gateway,
}

impl Replicas {
    fn start() -> Option<Self> {
        let Some(url) = hermes_postgres::testing::database_url() else {
            assert!(std::env::var_os("HERMES_TEST_REQUIRE_POSTGRES").is_none());
            eprintln!("SKIPPED: set HERMES_TEST_DATABASE_URL to a PostgreSQL database");
            return None;
        };
        let scratch = hermes_postgres::testing::Scratch::new(&url).unwrap();
        let shared = format!(
            "sessiondb:\n  provider: postgresql\n  schema: {}\n",
            scratch.schema
        );
        let env = [("HERMES_DATABASE_URL", url.as_str())];
        let (sb_a, sb_b) = (Sandbox::start(), Sandbox::start());
        let a = gateway_with_env(&sb_a, &shared, &env);
        let b = gateway_with_env(&sb_b, &shared, &env);
        Some(Self {
            _scratch: scratch,
            sb_a,
            sb_b,
            a,
            b,
        })
    }
}

#[test]
fn a_run_is_followed_and_stopped_through_another_replica() {
    let Some(Replicas {
        _scratch,
        sb_a,
        sb_b: _,
        a,
        b,
    }) = Replicas::start()
    else {
        return;
    };

    // Started through A; the client leaves A mid-answer and comes back to B.
    std::fs::write(sb_a.work_path("notes.txt"), "forty two\n").unwrap();
    sb_a.mock.push(Reply::tool_call(
        "call_1",
        "read_file",
        &json!({"path": sb_a.work_path("notes.txt")}).to_string(),
    ));
    let answer = "The notes say the answer is forty two.";
    sb_a.mock
        .push(Reply::text(answer).with_chunk_delay(Duration::from_millis(200)));
    let run_id = start_run(&a, &json!({"input": "what do my notes say?"}));
    let first = read_events(a.port, &run_id, None, |e| e["event"] == "message.delta");
    assert!(!first.closed);
    let last = first.events.last().unwrap().0;
    let (status, run) = get_json(&b, &format!("/v1/runs/{run_id}"));
    assert_eq!(
        (status, run["status"].as_str()),
        (200, Some("running")),
        "{run}"
    );
    let second = read_events(b.port, &run_id, Some(last), |_| false);
    assert!(second.closed, "B's stream ends with the run A executes");
    let all: Vec<(u64, Value)> = first.events.into_iter().chain(second.events).collect();
    let seqs: Vec<u64> = all.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        seqs,
        (1..=all.len() as u64).collect::<Vec<_>>(),
        "each event once"
    );
    let text: String = all
        .iter()
        .filter(|(_, e)| e["event"] == "message.delta")
        .map(|(_, e)| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, answer);
    assert_eq!(all.last().unwrap().1["event"], "run.completed");
    assert_eq!(all.last().unwrap().1["output"], answer);
    assert!(
        !sb_a.home.path().join("runs.db").exists(),
        "runs live in the database"
    );

    // `stop` sent to B stops a run executing on A.
    sb_a.mock.push(Reply::tool_call(
        "call_1",
        "terminal",
        &json!({"command": "sleep 30"}).to_string(),
    ));
    sb_a.mock.push(Reply::text("never sent"));
    let run_id = start_run(&a, &json!({"input": "wait a while"}));
    let started = read_events(b.port, &run_id, None, |e| e["event"] == "tool.started");
    let t0 = Instant::now();
    let (status, _, body) = post(&b, &format!("/v1/runs/{run_id}/stop"), &json!({}));
    assert_eq!(status, 200, "{body}");
    let rest = read_events(
        b.port,
        &run_id,
        Some(started.events.last().unwrap().0),
        |_| false,
    );
    assert!(rest.closed);
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    assert_eq!(names(&rest.events).last().unwrap(), "run.cancelled");
    let (_, run) = get_json(&a, &format!("/v1/runs/{run_id}"));
    assert_eq!(run["status"], "cancelled");
}

/// A non-streamed chat in session `session` on `port`, from another thread.
fn chat_in_session(
    port: u16,
    session: &'static str,
    content: &'static str,
) -> std::thread::JoinHandle<(u16, String, Instant)> {
    std::thread::spawn(move || {
        let (k, v) = auth();
        let body = json!({"messages": [{"role": "user", "content": content}]}).to_string();
        let (status, _, text) = http_try(
            port,
            "POST",
            "/v1/chat/completions",
            &[(k, &v), ("X-Hermes-Session-Id", session)],
            &body,
        )
        .unwrap();
        (status, text, Instant::now())
    })
}

#[test]
fn one_turn_at_a_time_per_session_across_replicas() {
    let Some(Replicas {
        _scratch,
        sb_a,
        sb_b,
        a,
        b,
    }) = Replicas::start()
    else {
        return;
    };
    sb_a.mock
        .push(Reply::text("noted: blue").with_delay(Duration::from_millis(1500)));
    sb_b.mock.push(Reply::text("you said blue"));
    let slow = chat_in_session(a.port, "team-shared", "my colour is blue");
    std::thread::sleep(Duration::from_millis(400));
    let quick = chat_in_session(b.port, "team-shared", "what is my colour?");
    let (status_a, text_a, done_a) = slow.join().unwrap();
    let (status_b, text_b, done_b) = quick.join().unwrap();
    assert_eq!((status_a, status_b), (200, 200), "{text_a}\n{text_b}");
    assert!(done_b >= done_a, "B's turn waited for A's");
    // B's turn saw A's, read back from the database after the wait.
    let asked = sb_b.mock.chat_requests().pop().unwrap().to_string();
    assert!(
        asked.contains("my colour is blue") && asked.contains("noted: blue"),
        "{asked}"
    );
}
