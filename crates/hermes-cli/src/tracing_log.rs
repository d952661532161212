//! `tracing` events — rmcp's, reqwest's and hyper's, and any of ours — go to
//! `logs/agent.log` (and `errors.log`) at the `logging.level` configured,
//! named by their target as Python loggers are named by module. A subscriber
//! of our own: all it must do is format an event's fields into one line, and
//! the log files already mask secrets and rotate.

use std::fmt::Write as _;
use std::sync::Arc;

use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Id, Record};
use tracing_core::{Event, Level as TraceLevel, LevelFilter, Metadata, Subscriber};

use crate::logging::{Level, LogFiles};

/// Writes `tracing` events into log files.
struct ToLogFiles {
    files: Arc<LogFiles>,
    floor: Level,
}

fn level_of(level: &TraceLevel) -> Option<Level> {
    match *level {
        TraceLevel::ERROR => Some(Level::Error),
        TraceLevel::WARN => Some(Level::Warning),
        TraceLevel::INFO => Some(Level::Info),
        TraceLevel::DEBUG => Some(Level::Debug),
        // Trace-level chatter (every poll of every socket) is never kept.
        _ => None,
    }
}

impl Subscriber for ToLogFiles {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event() && level_of(metadata.level()).is_some_and(|l| l >= self.floor)
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(match self.floor {
            Level::Debug => LevelFilter::DEBUG,
            Level::Info => LevelFilter::INFO,
            Level::Warning => LevelFilter::WARN,
            Level::Error => LevelFilter::ERROR,
        })
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        // Spans are not kept; every span shares one id.
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        let Some(level) = level_of(metadata.level()) else {
            return;
        };
        let mut line = Line::default();
        event.record(&mut line);
        self.files
            .write(level, "", metadata.target(), &line.finish());
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// An event's `message` followed by its other fields as `name=value`.
#[derive(Default)]
struct Line {
    message: String,
    fields: String,
}

impl Line {
    fn finish(self) -> String {
        match (self.message.is_empty(), self.fields.is_empty()) {
            (_, true) => self.message,
            (true, false) => self.fields,
            (false, false) => format!("{} {}", self.message, self.fields),
        }
    }
}

impl Visit for Line {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
            return;
        }
        if !self.fields.is_empty() {
            self.fields.push(' ');
        }
        let _ = write!(self.fields, "{}={value:?}", field.name());
    }
}

/// A dispatcher writing into `files` at their level.
fn dispatch(files: Arc<LogFiles>) -> tracing_core::Dispatch {
    let floor = files.level();
    tracing_core::Dispatch::new(ToLogFiles { files, floor })
}

/// Sends this process's `tracing` events to `files` from now on (the first
/// call wins; later ones change nothing).
pub(crate) fn collect(files: Arc<LogFiles>) {
    let _ = tracing_core::dispatcher::set_global_default(dispatch(files));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::logging::LogSettings;

    #[test]
    fn events_reach_agent_log_at_the_configured_level_with_secrets_masked() {
        let home = tempfile::tempdir().unwrap();
        let hermes = hermes_state::HermesHome::new(home.path());
        let config = hermes_state::Config::default();
        let files = LogFiles::open(&LogSettings::from_config(&hermes, &config), false);
        tracing_core::dispatcher::with_default(&dispatch(files), || {
            tracing::info!(target: "rmcp::service", peer = "srv", "connected");
            tracing::debug!(target: "hyper::client", "below the INFO floor");
            tracing::warn!(
                target: "rmcp::transport",
                "token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 refused"
            );
        });
        let log = std::fs::read_to_string(home.path().join("logs/agent.log")).unwrap();
        assert!(
            log.contains("INFO rmcp::service: connected peer=\"srv\""),
            "{log}"
        );
        assert!(!log.contains("below the INFO floor"), "{log}");
        assert!(log.contains("WARNING rmcp::transport: token "), "{log}");
        assert!(
            !log.contains("abcdefghijklmnopqrstuvwxyz0123456789"),
            "{log}"
        );
        let errors = std::fs::read_to_string(home.path().join("logs/errors.log")).unwrap();
        assert!(errors.contains("rmcp::transport") && !errors.contains("connected"));
    }
}
