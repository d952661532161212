//! `$HERMES_HOME/logs/`: `agent.log` (and `errors.log` for warnings and
//! errors), as the reference keeps them: one record per tool call, status and
//! turn, tagged with the session id, secrets masked, rotated by size; the
//! gateway adds `gateway.log` for its own lines (platforms, messages in and
//! out, the API server, cron). Tool calls made inside an `execute_code` script
//! or by a subagent are logged too, under their origin, although they never
//! enter the conversation.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use hermes_protocol::{Event, ToolOutcome};
use hermes_state::time::UtcTime;
use hermes_state::{Config, HermesHome};

/// Severity, as the reference's logging levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Debug,
    Info,
    Warning,
    Error,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Warning => "WARNING",
            Level::Error => "ERROR",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_uppercase().as_str() {
            "DEBUG" => Some(Level::Debug),
            "INFO" => Some(Level::Info),
            "WARNING" | "WARN" => Some(Level::Warning),
            "ERROR" => Some(Level::Error),
            _ => None,
        }
    }
}

/// One rotating log file.
#[derive(Debug)]
struct Rotating {
    path: PathBuf,
    max_bytes: u64,
    backups: usize,
    file: Option<File>,
    /// Bytes in the file, read when it is opened and counted after (one stat, not one per line).
    size: u64,
}

impl Rotating {
    fn new(path: PathBuf, max_bytes: u64, backups: usize) -> Self {
        Self {
            path,
            max_bytes,
            backups,
            file: None,
            size: 0,
        }
    }

    /// Appends one line; a log that cannot be written never stops the agent.
    fn write_line(&mut self, line: &str) {
        if self.file.is_none() {
            self.size = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        }
        let needed = line.len() as u64 + 1;
        if self.size > 0 && self.size + needed > self.max_bytes {
            self.file = None;
            self.rotate();
            self.size = 0;
        }
        if self.file.is_none() {
            if let Some(dir) = self.path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            self.file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .ok();
        }
        if let Some(file) = self.file.as_mut()
            && writeln!(file, "{line}").is_ok()
        {
            self.size += needed;
        }
    }

    /// `agent.log` → `agent.log.1` → … → `agent.log.N` (the oldest goes).
    fn rotate(&self) {
        if self.backups == 0 {
            let _ = std::fs::remove_file(&self.path);
            return;
        }
        let numbered = |n: usize| PathBuf::from(format!("{}.{n}", self.path.display()));
        let _ = std::fs::remove_file(numbered(self.backups));
        for n in (1..self.backups).rev() {
            let _ = std::fs::rename(numbered(n), numbered(n + 1));
        }
        let _ = std::fs::rename(&self.path, numbered(1));
    }
}

/// The `logging:` section: `level` (INFO), `max_size_mb` (5), `backup_count` (3).
#[derive(Debug, Clone)]
pub(crate) struct LogSettings {
    dir: PathBuf,
    level: Level,
    max_bytes: u64,
    backups: usize,
}

impl LogSettings {
    /// Reads the settings; logs go to `home`'s `logs/`.
    pub(crate) fn from_config(home: &HermesHome, config: &Config) -> Self {
        let logging = &config.sections.logging;
        let level = logging
            .level
            .as_deref()
            .and_then(Level::parse)
            .unwrap_or(Level::Info);
        let count = |n: Option<f64>, default: u64| {
            hermes_state::settings::lenient::count(n).unwrap_or(default)
        };
        Self {
            dir: home.logs_dir(),
            level,
            max_bytes: count(logging.max_size_mb, 5).max(1) * 1024 * 1024,
            backups: usize::try_from(count(logging.backup_count, 3)).unwrap_or(3),
        }
    }

    /// A writer tagging its lines with `session_id` (the terminal's one session).
    pub(crate) fn open(&self, session_id: &str) -> AgentLog {
        AgentLog {
            files: LogFiles::open(self, false),
            session_id: session_id.to_owned(),
        }
    }
}

/// The process's log files: `agent.log` (everything at the configured level),
/// `errors.log` (warnings and errors) and, for the gateway, `gateway.log`
/// (its own `gateway.*` lines, INFO and up), as the reference splits them.
/// One set per process, so every session's lines rotate together.
#[derive(Debug)]
pub(crate) struct LogFiles {
    level: Level,
    files: Mutex<Files>,
}

#[derive(Debug)]
struct Files {
    agent: Rotating,
    errors: Rotating,
    gateway: Option<Rotating>,
}

impl LogFiles {
    /// The files in `settings`' directory; `gateway` adds `gateway.log`.
    pub(crate) fn open(settings: &LogSettings, gateway: bool) -> Arc<Self> {
        let dir = &settings.dir;
        Arc::new(Self {
            level: settings.level,
            files: Mutex::new(Files {
                agent: Rotating::new(dir.join("agent.log"), settings.max_bytes, settings.backups),
                errors: Rotating::new(dir.join("errors.log"), 2 * 1024 * 1024, 2),
                gateway: gateway
                    .then(|| Rotating::new(dir.join("gateway.log"), 5 * 1024 * 1024, 3)),
            }),
        })
    }

    /// The level below which nothing reaches `agent.log`.
    pub(crate) fn level(&self) -> Level {
        self.level
    }

    /// Writes one record: `time LEVEL [session] logger: message`, secrets masked.
    pub(crate) fn write(&self, level: Level, session_id: &str, logger: &str, message: &str) {
        let to_gateway =
            level >= Level::Info && (logger == "gateway" || logger.starts_with("gateway."));
        if level < self.level && !to_gateway {
            return;
        }
        let line = format!(
            "{} {}{} {logger}: {}",
            timestamp(),
            level.as_str(),
            if session_id.is_empty() {
                String::new()
            } else {
                format!(" [{session_id}]")
            },
            hermes_llm::classify::redact_secrets(message.trim_end()),
        );
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        if level >= self.level {
            files.agent.write_line(&line);
        }
        if level >= Level::Warning {
            files.errors.write_line(&line);
        }
        if to_gateway && let Some(gateway) = files.gateway.as_mut() {
            gateway.write_line(&line);
        }
    }

    /// Writes what `event` of session `session_id` is worth keeping; text and
    /// reasoning deltas are not.
    pub(crate) fn record(&self, session_id: &str, event: &Event) {
        if let Some((level, logger, message)) = describe(event) {
            self.write(level, session_id, &logger, &message);
        }
    }
}

/// Lines about a scheduled job's run, as the reference's scheduler writes them.
pub(crate) fn log_cron_run(files: &LogFiles, outcome: &hermes_session::cron::run::RunOutcome) {
    let logger = "cron.scheduler";
    match &outcome.result {
        Ok(_) => files.write(
            Level::Info,
            "",
            logger,
            &format!("Job '{}' completed successfully", outcome.name),
        ),
        Err(e) => files.write(
            Level::Error,
            "",
            logger,
            &format!("Job '{}' failed: {e}", outcome.name),
        ),
    }
    if let Some(e) = &outcome.delivery_error {
        files.write(
            Level::Warning,
            "",
            logger,
            &format!("Job '{}': delivery failed: {e}", outcome.name),
        );
    }
}

/// The terminal session's log writer.
#[derive(Debug)]
pub(crate) struct AgentLog {
    files: Arc<LogFiles>,
    session_id: String,
}

impl AgentLog {
    /// Writes what `event` is worth keeping, under the session id of the moment.
    pub(crate) fn record(&mut self, event: &Event) {
        if let Event::SessionChanged { session_id, .. } = event {
            session_id.clone_into(&mut self.session_id);
        }
        self.files.record(&self.session_id, event);
    }
}

/// Level, logger name and message for an event worth a line.
fn describe(event: &Event) -> Option<(Level, String, String)> {
    Some(match event {
        Event::ToolStarted {
            name, arguments, ..
        } => (
            Level::Info,
            "tools".into(),
            format!("{name} called: {}", clip(arguments, 300)),
        ),
        Event::ToolFinished {
            name,
            outcome,
            result,
            duration_ms,
            ..
        } => match outcome {
            ToolOutcome::Ok => (
                Level::Info,
                "tools".into(),
                format!(
                    "{name} finished in {duration_ms} ms ({} chars)",
                    result.chars().count()
                ),
            ),
            ToolOutcome::Error => (
                Level::Warning,
                "tools".into(),
                format!("{name} failed in {duration_ms} ms: {}", clip(result, 300)),
            ),
            ToolOutcome::Cancelled => (Level::Info, "tools".into(), format!("{name} cancelled")),
        },
        Event::Status { message } => (Level::Info, "agent".into(), message.clone()),
        Event::ModelCall {
            provider,
            model,
            status,
            duration_ms,
            usage,
        } => (
            Level::Debug,
            "agent".into(),
            format!(
                "API call {provider}/{model}: {status} in {duration_ms} ms ({} input / {} output tokens)",
                usage.input_tokens, usage.output_tokens
            ),
        ),
        Event::Error { message } => (Level::Error, "agent".into(), message.clone()),
        Event::TurnComplete {
            reason,
            usage,
            api_calls,
            ..
        } => (
            Level::Info,
            "agent".into(),
            format!(
                "turn ended ({reason:?}): {api_calls} API calls, {} input / {} output tokens",
                usage.input_tokens, usage.output_tokens
            ),
        ),
        Event::Nested { origin, inner } => {
            let (level, logger, message) = describe(inner)?;
            (level, format!("{logger}.{origin}"), message)
        }
        Event::ApprovalRequested {
            command, reason, ..
        } => (
            Level::Info,
            "approval".into(),
            format!("asked to approve ({reason}): {}", clip(command, 300)),
        ),
        Event::Announced { text } => (
            Level::Info,
            "agent".into(),
            format!(
                "background news starts a turn: {}",
                clip(text.lines().next().unwrap_or(""), 300)
            ),
        ),
        Event::TextDelta { .. }
        | Event::AnnouncementsWaiting
        | Event::ReasoningDelta { .. }
        | Event::MessageAppended { .. }
        | Event::ClarifyRequested { .. }
        | Event::SteerUnused { .. }
        | Event::QuestionClosed { .. }
        | Event::SessionChanged { .. }
        | Event::Undone { .. }
        | Event::ModelChanged { .. }
        | Event::Compressed { .. }
        | Event::Ack
        | Event::ShutdownComplete => {
            return None;
        }
    })
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}…")
}

/// `2026-11-22 23:45:01,123`, the reference's (Python logging's) format, in UTC.
fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let t = UtcTime::from_unix(i64::try_from(now.as_secs()).unwrap_or(0));
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02},{:03}",
        t.year,
        t.month,
        t.day,
        t.hour,
        t.minute,
        t.second,
        now.subsec_millis()
    )
}

#[cfg(test)]
#[path = "logging_tests.rs"]
mod tests;
