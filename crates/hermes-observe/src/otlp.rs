//! Sends finished spans to an OTLP/HTTP collector as protobuf
//! (`application/x-protobuf`), in batches from a background task, so a turn
//! never waits on the collector.

use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Status, span, status};
use prost::Message;
use tokio::sync::{mpsc, oneshot};

use crate::settings::OtlpSettings;
use crate::spans::{Kind, Span, Value};

/// Spans sent in one request at most.
const BATCH: usize = 512;
/// How long finished spans wait for company before they are sent.
const LINGER: Duration = Duration::from_secs(2);

enum Job {
    Spans(Vec<Span>),
    Flush(oneshot::Sender<()>),
}

/// The handle spans are given to.
#[derive(Debug, Clone)]
pub(crate) struct Exporter {
    jobs: mpsc::UnboundedSender<Job>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Job")
    }
}

impl Exporter {
    /// Starts the sending task on the current tokio runtime; `None` outside one.
    pub(crate) fn start(settings: OtlpSettings, service_name: String) -> Option<Self> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        // The process's TLS setup (system roots, ring), as the model calls use.
        let client = hermes_llm::SharedHttp::new(settings.timeout).ok()?.client();
        let (jobs, rx) = mpsc::unbounded_channel();
        runtime.spawn(send_loop(rx, client, settings, service_name));
        Some(Self { jobs })
    }

    /// Queues finished spans.
    pub(crate) fn export(&self, spans: Vec<Span>) {
        let _ = self.jobs.send(Job::Spans(spans));
    }

    /// Sends what is queued; returns when it is sent or `wait` has passed.
    pub(crate) async fn flush(&self, wait: Duration) {
        let (done, sent) = oneshot::channel();
        if self.jobs.send(Job::Flush(done)).is_ok() {
            let _ = tokio::time::timeout(wait, sent).await;
        }
    }
}

async fn send_loop(
    mut jobs: mpsc::UnboundedReceiver<Job>,
    client: reqwest::Client,
    settings: OtlpSettings,
    service_name: String,
) {
    let mut queued: Vec<Span> = Vec::new();
    loop {
        let job = if queued.is_empty() {
            jobs.recv().await
        } else {
            match tokio::time::timeout(LINGER, jobs.recv()).await {
                Ok(job) => job,
                Err(_) => Some(Job::Flush(oneshot::channel().0)),
            }
        };
        match job {
            Some(Job::Spans(spans)) => {
                queued.extend(spans);
                if queued.len() >= BATCH {
                    send(
                        &client,
                        &settings,
                        &service_name,
                        std::mem::take(&mut queued),
                    )
                    .await;
                }
            }
            Some(Job::Flush(done)) => {
                if !queued.is_empty() {
                    send(
                        &client,
                        &settings,
                        &service_name,
                        std::mem::take(&mut queued),
                    )
                    .await;
                }
                let _ = done.send(());
            }
            None => {
                if !queued.is_empty() {
                    send(&client, &settings, &service_name, queued).await;
                }
                return;
            }
        }
    }
}

/// One export request; a collector that is down or refuses loses these
/// spans and nothing else (the agent goes on).
async fn send(client: &reqwest::Client, settings: &OtlpSettings, service: &str, spans: Vec<Span>) {
    let body = encode(service, spans);
    let mut request = client
        .post(&settings.traces_url)
        .header("content-type", "application/x-protobuf")
        .timeout(settings.timeout)
        .body(body);
    for (name, value) in &settings.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let _ = request.send().await;
}

/// The protobuf body of an export request carrying `spans`.
pub(crate) fn encode(service: &str, spans: Vec<Span>) -> Vec<u8> {
    let resource = Resource {
        attributes: vec![
            attribute("service.name", Value::Str(service.into())),
            attribute(
                "service.version",
                Value::Str(env!("CARGO_PKG_VERSION").into()),
            ),
        ],
        ..Default::default()
    };
    let scope = InstrumentationScope {
        name: "hermes".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ..Default::default()
    };
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(resource),
            scope_spans: vec![ScopeSpans {
                scope: Some(scope),
                spans: spans.into_iter().map(proto_span).collect(),
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
    .encode_to_vec()
}

fn proto_span(s: Span) -> opentelemetry_proto::tonic::trace::v1::Span {
    let kind = match s.kind {
        Kind::Internal => span::SpanKind::Internal,
        Kind::Client => span::SpanKind::Client,
    };
    let status = match &s.error {
        Some(class) => Status {
            message: class.clone(),
            code: status::StatusCode::Error as i32,
        },
        None => Status {
            message: String::new(),
            code: status::StatusCode::Ok as i32,
        },
    };
    opentelemetry_proto::tonic::trace::v1::Span {
        trace_id: s.trace_id.to_vec(),
        span_id: s.span_id.to_vec(),
        parent_span_id: s.parent.map(|p| p.to_vec()).unwrap_or_default(),
        name: s.name,
        kind: kind as i32,
        start_time_unix_nano: s.start_ns,
        end_time_unix_nano: s.end_ns,
        attributes: s
            .attributes
            .into_iter()
            .map(|(k, v)| attribute(k, v))
            .collect(),
        status: Some(status),
        ..Default::default()
    }
}

fn attribute(key: &str, value: Value) -> KeyValue {
    let value = match value {
        Value::Str(s) => any_value::Value::StringValue(s),
        Value::Int(n) => any_value::Value::IntValue(n),
    };
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}
