//! Observability for operators: Prometheus metrics and OpenTelemetry traces,
//! both built from the events sessions already send their front-ends — the
//! agent loop knows nothing of them. A front-end hands every event to an
//! [`Observer`]; the API server serves [`Observer::metrics_text`] at
//! `/metrics`; spans go to an OTLP/HTTP collector when one is configured.
//!
//! No message content reaches a span unless `observability.include_content`
//! is on, and then with secrets masked.

mod metrics;
mod otlp;
mod settings;
pub mod spans;

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use hermes_protocol::Event;

pub use metrics::{Labels, Metrics};
pub use settings::{ObserveSettings, OtlpSettings};

/// Counts and traces the events of every session it is shown.
#[derive(Debug)]
pub struct Observer {
    metrics: Option<Metrics>,
    exporter: Option<otlp::Exporter>,
    include_content: bool,
    /// Sessions with a turn in progress, and its spans when tracing.
    turns: Mutex<HashMap<String, Option<spans::OpenTurn>>>,
}

impl std::fmt::Debug for spans::OpenTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OpenTurn")
    }
}

impl Observer {
    /// An observer for `settings`; `None` when there is nothing to observe.
    /// Tracing needs a tokio runtime (the exporter's task runs on it).
    pub fn new(settings: &ObserveSettings) -> Option<Self> {
        let exporter = settings
            .otlp
            .clone()
            .and_then(|otlp| otlp::Exporter::start(otlp, settings.service_name.clone()));
        if !settings.metrics && exporter.is_none() {
            return None;
        }
        Some(Self {
            metrics: settings.metrics.then(Metrics::new),
            exporter,
            include_content: settings.include_content,
            turns: Mutex::new(HashMap::new()),
        })
    }

    /// The metrics, when counted.
    pub fn metrics(&self) -> Option<&Metrics> {
        self.metrics.as_ref()
    }

    /// The OpenMetrics text of every metric (empty when not counted).
    pub fn metrics_text(&self) -> String {
        self.metrics
            .as_ref()
            .map(Metrics::render)
            .unwrap_or_default()
    }

    /// Takes in one event of session `session_id` on `platform` (`cli`,
    /// `telegram`, `api_server` …); `conversation` keys the turn in progress
    /// (a compression mid-turn changes the session id, not the conversation).
    pub fn record(&self, conversation: &str, session_id: &str, platform: &str, event: &Event) {
        if let Some(metrics) = &self.metrics {
            count(metrics, event);
        }
        let ended = match event {
            Event::TurnComplete {
                reason, final_text, ..
            } => Some((Some(reason), final_text.as_str())),
            Event::Error { message } => Some((None, message.as_str())),
            _ => None,
        };
        let mut turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        let Some((reason, text)) = ended else {
            if opens_turn(event) || turns.contains_key(conversation) {
                let tracing = self.exporter.is_some();
                let turn = turns
                    .entry(conversation.to_owned())
                    .or_insert_with(|| tracing.then(spans::OpenTurn::start));
                if let Some(turn) = turn {
                    turn.take(None, event, self.include_content);
                }
            }
            return;
        };
        // An error outside a turn (a failed /undo, say) is not a turn.
        let open = turns.remove(conversation);
        drop(turns);
        if let Some(metrics) = &self.metrics
            && (open.is_some() || reason.is_some())
        {
            metrics.turn(platform, reason);
        }
        if let (Some(Some(turn)), Some(exporter)) = (open, &self.exporter) {
            exporter.export(turn.finish(session_id, platform, reason, text, self.include_content));
        }
    }

    /// Sends the spans not yet sent, waiting at most `wait` (a process about
    /// to exit calls it).
    pub async fn flush(&self, wait: Duration) {
        if let Some(exporter) = &self.exporter {
            exporter.flush(wait).await;
        }
    }
}

/// Events that happen only inside a turn (a steer's `Ack` or a `/model`
/// switch during one does not start one).
fn opens_turn(event: &Event) -> bool {
    matches!(
        event,
        Event::MessageAppended { .. }
            | Event::ModelCall { .. }
            | Event::ToolStarted { .. }
            | Event::TextDelta { .. }
            | Event::Nested { .. }
    )
}

/// Counts what one event says, subagents' and scripts' calls included.
fn count(metrics: &Metrics, event: &Event) {
    match event {
        Event::Nested { inner, .. } => count(metrics, inner),
        Event::ToolFinished {
            name,
            outcome,
            duration_ms,
            ..
        } => metrics.tool(name, *outcome, *duration_ms),
        Event::ModelCall {
            provider,
            model,
            status,
            duration_ms,
            usage,
        } => metrics.model_call(provider, model, status, *duration_ms, usage),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
