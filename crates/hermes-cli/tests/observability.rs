//! Metrics and traces as an operator sees them: Debian's Prometheus scrapes
//! the gateway's `/metrics` and a PromQL query counts the turns; an OTLP/HTTP
//! receiver decodes what the binary sends with the official protobuf types
//! (`opentelemetry-proto`) and finds one trace per turn, the model and tool
//! calls under it, and no planted secret anywhere.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hermes_mock::Reply;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{Value, json};
use support::gateway::*;
use support::*;

const SECRET: &str = "sk-ant-api03-PLANTEDsecretPLANTEDsecret0123456789";
const COLLECTOR_KEY: &str = "collector-key-7f3e";

/// One request the receiver took: lower-cased headers and body.
type Received = (Vec<(String, String)>, Vec<u8>);

/// An OTLP/HTTP receiver on loopback answering 200 to everything.
struct Receiver {
    port: u16,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let sink = sink.clone();
                std::thread::spawn(move || serve_connection(conn, &sink));
            }
        });
        Self { port, got }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The spans of every export so far, with the requests' headers.
    fn spans(&self) -> (Vec<Span>, Vec<Received>) {
        let got = self.got.lock().unwrap().clone();
        let mut spans = Vec::new();
        for (_, body) in &got {
            let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
            for rs in request.resource_spans {
                let resource = rs.resource.unwrap();
                assert_eq!(
                    string_attr(&resource.attributes, "service.name"),
                    Some("hermes-agent".into())
                );
                for ss in rs.scope_spans {
                    spans.extend(ss.spans);
                }
            }
        }
        (spans, got)
    }

    /// Waits until the spans of `turns` turns have arrived.
    fn wait_for_turns(&self, turns: usize) -> (Vec<Span>, Vec<Received>) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (spans, got) = self.spans();
            let roots = spans.iter().filter(|s| s.parent_span_id.is_empty()).count();
            if roots >= turns || Instant::now() > deadline {
                return (spans, got);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn serve_connection(conn: std::net::TcpStream, sink: &Mutex<Vec<Received>>) {
    let mut writer = conn.try_clone().unwrap();
    let mut reader = BufReader::new(conn);
    loop {
        let mut headers = Vec::new();
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            if let Some((k, v)) = trimmed.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        let length: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        sink.lock().unwrap().push((headers, body));
        let answer =
            b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(answer).is_err() {
            return;
        }
    }
}

fn string_attr(
    attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<String> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            any_value::Value::StringValue(s) => Some(s.clone()),
            any_value::Value::IntValue(n) => Some(n.to_string()),
            _ => None,
        }
    })
}

fn otlp_config(receiver: &Receiver) -> String {
    format!(
        "observability:\n  include_content: true\n  otlp:\n    endpoint: {}\n    headers:\n      x-collector-key: {COLLECTOR_KEY}\n",
        receiver.endpoint()
    )
}

/// No attribute, name or status of any span carries the planted secret,
/// and no request body either.
fn assert_no_secret(spans: &[Span], got: &[Received]) {
    for span in spans {
        let text = format!("{span:?}");
        assert!(!text.contains("PLANTEDsecret"), "secret in span {text}");
    }
    for (_, body) in got {
        let raw = String::from_utf8_lossy(body);
        assert!(!raw.contains("PLANTEDsecret"), "secret in an export body");
    }
}

#[test]
fn a_one_shot_turn_is_one_trace_with_its_model_and_tool_calls_under_it() {
    let sb = Sandbox::start();
    sb.no_retries();
    let receiver = Receiver::start();
    sb.add_config(&otlp_config(&receiver));
    sb.mock.push_all(vec![
        Reply::tool_call(
            "c1",
            "terminal",
            &json!({"command": format!("echo {SECRET}")}).to_string(),
        ),
        Reply::text(format!("done, and your key {SECRET}")),
    ]);
    let out = sb.chat(&format!("remember {SECRET} then run echo"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let session_id = session_id_of(&out);
    // The one-shot run flushes its spans before it exits.
    let (spans, got) = receiver.spans();
    assert!(
        !got.is_empty(),
        "no export arrived before the process exited"
    );
    for (headers, _) in &got {
        assert!(headers.contains(&("content-type".into(), "application/x-protobuf".into())));
        assert!(headers.contains(&("x-collector-key".into(), COLLECTOR_KEY.into())));
    }
    let traces: HashSet<_> = spans.iter().map(|s| s.trace_id.clone()).collect();
    assert_eq!(traces.len(), 1, "{spans:#?}");
    let roots: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1);
    let root = roots[0];
    assert_eq!(root.name, "invoke_agent hermes");
    assert_eq!(
        string_attr(&root.attributes, "gen_ai.conversation.id"),
        Some(session_id)
    );
    assert_eq!(
        string_attr(&root.attributes, "hermes.platform"),
        Some("cli".into())
    );
    let chats: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "chat mock-model")
        .collect();
    assert_eq!(chats.len(), 2, "{spans:#?}");
    let tools: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "execute_tool terminal")
        .collect();
    assert_eq!(tools.len(), 1);
    for child in chats.iter().chain(&tools) {
        assert_eq!(child.parent_span_id, root.span_id);
        assert!(child.start_time_unix_nano >= root.start_time_unix_nano);
        assert!(child.end_time_unix_nano <= root.end_time_unix_nano);
    }
    assert_eq!(
        string_attr(&chats[0].attributes, "gen_ai.operation.name"),
        Some("chat".into())
    );
    assert_eq!(
        string_attr(&tools[0].attributes, "gen_ai.tool.name"),
        Some("terminal".into())
    );
    // Content was asked for, so it is there — masked.
    let arguments = string_attr(&tools[0].attributes, "gen_ai.tool.call.arguments").unwrap();
    assert!(arguments.contains("echo"), "{arguments}");
    assert_no_secret(&spans, &got);
}

#[test]
fn without_include_content_no_message_or_tool_text_reaches_a_span() {
    let sb = Sandbox::start();
    sb.no_retries();
    let receiver = Receiver::start();
    sb.add_config(&format!(
        "observability:\n  otlp:\n    endpoint: {}\n",
        receiver.endpoint()
    ));
    sb.mock.push_all(vec![
        Reply::tool_call("c1", "terminal", r#"{"command":"echo private-words"}"#),
        Reply::text("the private answer"),
    ]);
    let out = sb.chat("a private question", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (spans, _) = receiver.spans();
    assert_eq!(spans.len(), 4, "{spans:#?}");
    let all = format!("{spans:?}");
    for private in ["private-words", "private answer", "private question"] {
        assert!(!all.contains(private), "{private} reached a span");
    }
}

/// Debian's Prometheus, scraping `target` every second with the API key.
struct Prometheus {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    fn start(target_port: u16) -> Option<Self> {
        let binary = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists());
        let Some(binary) = binary else {
            eprintln!("SKIPPED: prometheus is not installed (apt install prometheus)");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: hermes\n    authorization:\n      credentials: {KEY}\n    static_configs:\n      - targets: ['127.0.0.1:{target_port}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Some(Self {
            child,
            port,
            _dir: dir,
        })
    }

    /// The value of an instant PromQL query once it equals `want` (or the
    /// last value seen when 60 s pass).
    fn wait_for(&self, query: &str, want: &str) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = None;
        while Instant::now() < deadline {
            let path = format!("/api/v1/query?query={query}");
            if let Ok((200, _, body)) = http_try(self.port, "GET", &path, &[], "") {
                let answer: Value = serde_json::from_str(&body).unwrap_or_default();
                last = answer["data"]["result"][0]["value"][1]
                    .as_str()
                    .map(str::to_owned);
                if last.as_deref() == Some(want) {
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        last
    }
}

#[test]
fn prometheus_scrapes_the_gateway_and_promql_counts_its_turns_and_each_turn_is_a_trace() {
    let sb = Sandbox::start();
    let receiver = Receiver::start();
    let gw = gateway(&sb, &otlp_config(&receiver));
    // Without the key there is nothing to read.
    let (status, _, _) = http_try(gw.port, "GET", "/metrics", &[], "").unwrap();
    assert_eq!(status, 401);
    let Some(prometheus) = Prometheus::start(gw.port) else {
        return;
    };
    sb.mock.push_all(vec![
        Reply::tool_call("c1", "terminal", r#"{"command":"true"}"#),
        Reply::text("one"),
        Reply::text("two"),
    ]);
    for question in ["first", "second"] {
        let (status, _, body) = post(
            &gw,
            "/v1/chat/completions",
            &json!({"messages": [{"role": "user", "content": question}]}),
        );
        assert_eq!(status, 200, "{body}");
    }
    let (k, v) = auth();
    let (status, headers, text) = http_try(gw.port, "GET", "/metrics", &[(k, &v)], "").unwrap();
    assert_eq!(status, 200);
    assert!(
        header(&headers, "content-type")
            .unwrap()
            .starts_with("application/openmetrics-text")
    );
    assert!(
        text.contains(r#"hermes_turns_total{platform="api_server",outcome="completed"} 2"#),
        "{text}"
    );
    assert_eq!(
        prometheus
            .wait_for("up%7Bjob%3D%22hermes%22%7D", "1")
            .as_deref(),
        Some("1"),
        "Prometheus could not scrape /metrics"
    );
    assert_eq!(
        prometheus
            .wait_for("sum(hermes_turns_total)", "2")
            .as_deref(),
        Some("2")
    );
    assert_eq!(
        prometheus
            .wait_for(
                "sum(hermes_tool_calls_total%7Btool%3D%22terminal%22%7D)",
                "1"
            )
            .as_deref(),
        Some("1")
    );
    assert_eq!(
        prometheus
            .wait_for("sum(hermes_model_calls_total%7Bstatus%3D%22ok%22%7D)", "3")
            .as_deref(),
        Some("3")
    );
    let (spans, got) = receiver.wait_for_turns(2);
    let traces: HashSet<_> = spans.iter().map(|s| s.trace_id.clone()).collect();
    assert_eq!(traces.len(), 2, "{spans:#?}");
    let roots = spans.iter().filter(|s| s.parent_span_id.is_empty()).count();
    assert_eq!(roots, 2);
    for span in &spans {
        assert!(!span.span_id.is_empty() && span.trace_id.len() == 16);
    }
    assert_no_secret(&spans, &got);
}
