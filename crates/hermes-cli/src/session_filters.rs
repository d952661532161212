//! The filter flags `hermes sessions prune` and `archive` share (the
//! reference's names), and how their time values read: a duration ago (`5h`,
//! `30m`, `2d`, `1w`, a bare number of days) or a timestamp (`2026-07-05`,
//! `2026-07-05 14:30`, ISO 8601; without a zone it is UTC, as our session ids).

use clap::Args;
use hermes_protocol::iso_time::IsoTimestamp;
use hermes_state::session_db::SessionFilter;
use hermes_state::time::UtcTime;

/// Flags selecting ended sessions.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct FilterArgs {
    /// Only sessions started more than AGE ago, or before a timestamp.
    #[arg(long = "older-than", value_name = "AGE")]
    pub(crate) older_than: Option<String>,
    /// Only sessions started within the last AGE, or after a timestamp.
    #[arg(long = "newer-than", value_name = "AGE")]
    pub(crate) newer_than: Option<String>,
    /// Only sessions started before TIME (a duration ago, or a timestamp).
    #[arg(long, value_name = "TIME")]
    pub(crate) before: Option<String>,
    /// Only sessions started at or after TIME.
    #[arg(long, value_name = "TIME")]
    pub(crate) after: Option<String>,
    /// Only sessions from this source.
    #[arg(long)]
    pub(crate) source: Option<String>,
    /// Only sessions whose title contains this.
    #[arg(long)]
    pub(crate) title: Option<String>,
    /// Only sessions with this end reason.
    #[arg(long = "end-reason")]
    pub(crate) end_reason: Option<String>,
    /// Only sessions whose working directory is this path or under it.
    #[arg(long)]
    pub(crate) cwd: Option<String>,
    /// Only sessions with at least N messages.
    #[arg(long = "min-messages", value_name = "N")]
    pub(crate) min_messages: Option<i64>,
    /// Only sessions with at most N messages.
    #[arg(long = "max-messages", value_name = "N")]
    pub(crate) max_messages: Option<i64>,
    /// Only sessions whose model contains this.
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// Only sessions billed through this provider.
    #[arg(long)]
    pub(crate) provider: Option<String>,
    /// Only sessions from this user id.
    #[arg(long)]
    pub(crate) user: Option<String>,
    /// Only sessions from this chat or channel id.
    #[arg(long = "chat-id")]
    pub(crate) chat_id: Option<String>,
    /// Only sessions with this chat type (dm, group …).
    #[arg(long = "chat-type")]
    pub(crate) chat_type: Option<String>,
    /// Only sessions whose git branch contains this.
    #[arg(long)]
    pub(crate) branch: Option<String>,
    /// Only sessions with at least N input + output tokens.
    #[arg(long = "min-tokens", value_name = "N")]
    pub(crate) min_tokens: Option<i64>,
    /// Only sessions with at most N input + output tokens.
    #[arg(long = "max-tokens", value_name = "N")]
    pub(crate) max_tokens: Option<i64>,
    /// Only sessions costing at least this many USD.
    #[arg(long = "min-cost", value_name = "USD")]
    pub(crate) min_cost: Option<f64>,
    /// Only sessions costing at most this many USD.
    #[arg(long = "max-cost", value_name = "USD")]
    pub(crate) max_cost: Option<f64>,
    /// Only sessions with at least N tool calls.
    #[arg(long = "min-tool-calls", value_name = "N")]
    pub(crate) min_tool_calls: Option<i64>,
    /// Only sessions with at most N tool calls.
    #[arg(long = "max-tool-calls", value_name = "N")]
    pub(crate) max_tool_calls: Option<i64>,
    /// List what matches without changing anything.
    #[arg(long = "dry-run")]
    pub(crate) dry_run: bool,
    /// Skip the confirmation.
    #[arg(short = 'y', long)]
    pub(crate) yes: bool,
}

impl FilterArgs {
    /// Whether no time flag was given.
    pub(crate) fn no_time_window(&self) -> bool {
        self.older_than.is_none()
            && self.newer_than.is_none()
            && self.before.is_none()
            && self.after.is_none()
    }

    /// The store's filter, with times read relative to `now` (Unix seconds).
    pub(crate) fn to_filter(&self, now: f64) -> Result<SessionFilter, String> {
        let mut before: Option<f64> = None;
        let mut after: Option<f64> = None;
        for (value, flag) in [
            (&self.older_than, "--older-than"),
            (&self.before, "--before"),
        ] {
            if let Some(v) = value {
                let t = point_in_time(v, flag, now)?;
                before = Some(before.map_or(t, |b| b.min(t)));
            }
        }
        for (value, flag) in [(&self.newer_than, "--newer-than"), (&self.after, "--after")] {
            if let Some(v) = value {
                let t = point_in_time(v, flag, now)?;
                after = Some(after.map_or(t, |a| a.max(t)));
            }
        }
        if let (Some(b), Some(a)) = (before, after)
            && a >= b
        {
            return Err(format!(
                "the time window is empty: --after/--newer-than ({}) is not earlier than --before/--older-than ({})",
                format_time(a),
                format_time(b)
            ));
        }
        Ok(SessionFilter {
            started_before: before,
            started_after: after,
            source: self.source.clone(),
            title_like: self.title.clone(),
            end_reason: self.end_reason.clone(),
            cwd_prefix: self.cwd.clone(),
            min_messages: self.min_messages,
            max_messages: self.max_messages,
            model_like: self.model.clone(),
            provider: self.provider.clone(),
            user_id: self.user.clone(),
            chat_id: self.chat_id.clone(),
            chat_type: self.chat_type.clone(),
            branch_like: self.branch.clone(),
            min_tokens: self.min_tokens,
            max_tokens: self.max_tokens,
            min_cost: self.min_cost,
            max_cost: self.max_cost,
            min_tool_calls: self.min_tool_calls,
            max_tool_calls: self.max_tool_calls,
            archived: None,
        })
    }
}

/// Seconds in a duration such as `5h`, `30m`, `2d`, `1w`, `45s`, or a bare
/// number of days; `None` when `text` is not one.
pub(crate) fn duration_secs(text: &str) -> Option<f64> {
    let s = text.trim().to_ascii_lowercase();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let n: f64 = number.parse().ok().filter(|n: &f64| n.is_finite())?;
    let unit_secs = match unit.trim() {
        "" | "d" | "day" | "days" => 86_400.0,
        "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600.0,
        "w" | "wk" | "wks" | "week" | "weeks" => 604_800.0,
        _ => return None,
    };
    Some(n * unit_secs)
}

/// A flag's time value as Unix seconds: a duration means that long before `now`.
pub(crate) fn point_in_time(text: &str, flag: &str, now: f64) -> Result<f64, String> {
    if let Some(d) = duration_secs(text) {
        return Ok(now - d);
    }
    parse_timestamp(text.trim()).ok_or_else(|| {
        format!(
            "invalid value for {flag}: '{text}'. Use a duration like 5h, 30m, 2d, 1w, a bare number of days, or a timestamp like 2026-07-05 or 2026-07-05 14:30"
        )
    })
}

/// An ISO-8601 date or date-time as Unix seconds; no zone means UTC.
fn parse_timestamp(s: &str) -> Option<f64> {
    IsoTimestamp::parse(s).map(|t| t.unix_secs_f64())
}

/// `YYYY-MM-DD HH:MM` (UTC).
pub(crate) fn format_time(ts: f64) -> String {
    UtcTime::from_unix(ts as i64).short()
}

/// The active conditions in words, for previews and confirmations.
pub(crate) fn describe(f: &SessionFilter) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut text = |value: &Option<String>, label: &str| {
        if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
            parts.push(format!("{label} '{v}'"));
        }
    };
    text(&f.source, "source");
    text(&f.title_like, "title contains");
    text(&f.end_reason, "end reason");
    text(&f.cwd_prefix, "cwd under");
    text(&f.model_like, "model contains");
    text(&f.provider, "provider");
    text(&f.user_id, "user");
    text(&f.chat_id, "chat");
    text(&f.chat_type, "chat type");
    text(&f.branch_like, "git branch contains");
    let mut all = Vec::new();
    if let Some(t) = f.started_before {
        all.push(format!("started before {}", format_time(t)));
    }
    if let Some(t) = f.started_after {
        all.push(format!("started after {}", format_time(t)));
    }
    all.extend(parts);
    let bounds = [
        (f.min_messages, ">=", "messages"),
        (f.max_messages, "<=", "messages"),
        (f.min_tokens, ">=", "tokens"),
        (f.max_tokens, "<=", "tokens"),
        (f.min_tool_calls, ">=", "tool calls"),
        (f.max_tool_calls, "<=", "tool calls"),
    ];
    for (value, op, what) in bounds {
        if let Some(n) = value {
            all.push(format!("{op} {n} {what}"));
        }
    }
    if let Some(c) = f.min_cost {
        all.push(format!(">= ${c}"));
    }
    if let Some(c) = f.max_cost {
        all.push(format!("<= ${c}"));
    }
    if all.is_empty() {
        "no filters: every ended session".to_owned()
    } else {
        all.join(", ")
    }
}

#[cfg(test)]
#[path = "session_filters_tests.rs"]
mod tests;
