//! The gateway's log lines: the library says what happened, at what level and
//! under which logger; the binary writes them (`logs/gateway.log`, stderr).

use std::sync::Arc;

/// How much a line matters (the reference's logging levels the gateway uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Normal operation: connected, a message in, an answer out.
    Info,
    /// Something failed that the gateway works around (a retry, a dropped send).
    Warning,
    /// Something failed that someone should look at.
    Error,
}

/// Where log lines go: level, logger name (`gateway.run`,
/// `gateway.platforms.api_server`, as the reference names them) and message.
pub type LogFn = Arc<dyn Fn(LogLevel, &str, &str) + Send + Sync>;

/// The logger of the gateway's own lines (platforms, messages, cron).
pub const RUN_LOGGER: &str = "gateway.run";

/// The logger of the API server's lines.
pub const API_LOGGER: &str = "gateway.platforms.api_server";

/// `text` cut to `max` characters (an ellipsis marks the cut), on one line.
pub fn clip(text: &str, max: usize) -> String {
    let flat = text.replace(['\r', '\n'], " ");
    if flat.chars().count() <= max {
        return flat;
    }
    let head: String = flat.chars().take(max).collect();
    format!("{head}…")
}
