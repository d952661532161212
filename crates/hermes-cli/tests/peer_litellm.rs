//! End to end through a real third-party server: the LiteLLM proxy (PyPI `litellm[proxy]`)
//! translates our requests to OpenAI chat completions for its backend (the scripted
//! mock), and its answers back into each wire format we speak. What reaches `hermes`
//! is LiteLLM's own SSE, not ours: a tool call and its result round-trip per transport.
//!
//! Runs when `HERMES_LITELLM` names the `litellm` executable (`.ci/run` installs it);
//! otherwise it says so and passes, like the other peer tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hermes_mock::Reply;
use support::*;

const MASTER_KEY: &str = "sk-test-master";

/// The proxy process, killed on drop.
struct Proxy {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proxy {
    /// What the proxy printed so far.
    fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("litellm.log")).unwrap_or_default()
    }
}

/// `GET path` on the proxy; the status code, or `None` when it does not answer yet.
fn get_status(port: u16, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {MASTER_KEY}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

fn start_proxy(litellm: &str, backend: &str) -> Proxy {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "model_list:\n  - model_name: local\n    litellm_params:\n      model: lm_studio/mock-model\n      \
         api_base: {backend}\n      api_key: sk-none\nlitellm_settings:\n  telemetry: false\n  \
         use_chat_completions_url_for_anthropic_messages: true\ngeneral_settings:\n  master_key: {MASTER_KEY}\n"
    );
    let config_path = dir.path().join("litellm.yaml");
    std::fs::write(&config_path, config).unwrap();
    let port = free_port();
    let log = std::fs::File::create(dir.path().join("litellm.log")).unwrap();
    let child = Command::new(litellm)
        .args(["--config"])
        .arg(&config_path)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .env("LITELLM_TELEMETRY", "False")
        .env("NO_DOCS", "True")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut proxy = Proxy {
        child,
        port,
        _dir: dir,
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while get_status(port, "/health/liveliness") != Some(200) {
        if let Ok(Some(status)) = proxy.child.try_wait() {
            let log = std::fs::read_to_string(proxy._dir.path().join("litellm.log")).unwrap();
            panic!("litellm exited with {status}:\n{log}");
        }
        assert!(
            Instant::now() < deadline,
            "litellm did not become ready in 120 s"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    proxy
}

/// One tool round trip through the proxy with `config` (the `model:` section).
fn round_trip(sb: &Sandbox, config: &str, label: &str) {
    std::fs::write(sb.home.path().join("config.yaml"), config).unwrap();
    std::fs::write(sb.work_path("note.txt"), format!("peer says {label}\n")).unwrap();
    let before = sb.mock.chat_requests().len();
    sb.mock.push(Reply::tool_call(
        "call_1",
        "read_file",
        r#"{"path":"note.txt"}"#,
    ));
    sb.mock
        .push(Reply::text(format!("The note says: peer says {label}.")));
    let out = sb.chat("What does note.txt say?", &[]);
    assert!(
        out.status.success(),
        "{label}: {}\n{}",
        stderr(&out),
        stdout(&out)
    );
    assert_eq!(
        stdout(&out),
        format!("The note says: peer says {label}.\n"),
        "{label}"
    );
    // The backend's second request carries the tool result LiteLLM translated back.
    let requests = sb.mock.chat_requests();
    assert_eq!(requests.len(), before + 2, "{label}");
    let second = serde_json::to_string(&requests[before + 1]).unwrap();
    assert!(
        second.contains(&format!("peer says {label}")),
        "{label}: {second}"
    );
}

#[test]
fn tool_round_trips_through_litellm_per_transport() {
    let Ok(litellm) = std::env::var("HERMES_LITELLM") else {
        eprintln!("skipped: set HERMES_LITELLM to a litellm[proxy] executable (.ci/run does)");
        return;
    };
    let sb = Sandbox::start();
    let proxy = start_proxy(&litellm, &sb.mock.base_url());
    let root = format!("http://127.0.0.1:{}", proxy.port);
    round_trip(
        &sb,
        &format!(
            "model:\n  provider: custom\n  base_url: {root}/v1\n  api_key: {MASTER_KEY}\n  default: local\n"
        ),
        "chat_completions",
    );
    round_trip(
        &sb,
        &format!(
            "model:\n  provider: custom\n  api_mode: anthropic_messages\n  base_url: {root}\n  \
             api_key: {MASTER_KEY}\n  default: local\n"
        ),
        "anthropic_messages",
    );
    // A plain `custom` provider keeps chat completions whatever `api_mode` says (as in the
    // reference); a named provider opts in to the Responses API with `transport:`.
    round_trip(
        &sb,
        &format!(
            "model:\n  provider: litellm\n  default: local\nproviders:\n  litellm:\n    \
             base_url: {root}/v1\n    api_key: {MASTER_KEY}\n    transport: codex_responses\n"
        ),
        "codex_responses",
    );
    // Each transport reached its own LiteLLM route (uvicorn's access log).
    let log = proxy.log();
    for route in ["/v1/chat/completions", "/v1/messages", "/v1/responses"] {
        assert!(
            log.contains(&format!("POST {route} HTTP/1.1\" 200")),
            "{route} not served:\n{log}"
        );
    }
}
