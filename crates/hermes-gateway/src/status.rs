//! `gateway_state.json` in the home, as the reference's gateway keeps it: the
//! gateway's state, and each platform's (`connecting`, `connected`,
//! `retrying` with the error, `standing_by`, `stopped`) with when it last
//! changed and when its last message came, for `hermes dashboard` and any
//! tool that reads the reference's file.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value, json};

/// The file's name in the home.
pub const FILE: &str = "gateway_state.json";

/// The live status, written through on every change.
#[derive(Debug)]
pub struct RuntimeStatus {
    path: PathBuf,
    record: Mutex<Value>,
    /// When each platform's last poll was written (polls are frequent).
    polls: Mutex<std::collections::HashMap<String, std::time::Instant>>,
}

/// A platform's `last_poll_at` is rewritten at most this often.
const POLL_NOTE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Now, as the reference writes times (ISO 8601, UTC).
fn now_iso() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    hermes_state::time::UtcTime::from_unix(i64::try_from(secs).unwrap_or(0)).iso()
}

impl RuntimeStatus {
    /// A fresh record (`starting`) for the gateway of `home`.
    pub fn start(home: &Path) -> Self {
        let status = Self {
            path: home.join(FILE),
            record: Mutex::new(json!({
                "pid": std::process::id(),
                "kind": "hermes-gateway",
                "gateway_state": "starting",
                "exit_reason": null,
                "active_agents": 0,
                "platforms": {},
                "updated_at": now_iso(),
            })),
            polls: Mutex::new(std::collections::HashMap::new()),
        };
        status.write(|_| {});
        status
    }

    /// The gateway as a whole: `running`, `stopped` ….
    pub fn gateway(&self, state: &str) {
        self.write(|record| record["gateway_state"] = json!(state));
    }

    /// Platform `name` is now in `state` (with `error` when it failed).
    pub fn platform(&self, name: &str, state: &str, error: Option<&str>) {
        self.write(|record| {
            if let Some(entry) = platform_entry(record, name) {
                entry.insert("state".into(), json!(state));
                entry.insert("error_message".into(), json!(error));
                entry.insert("updated_at".into(), json!(now_iso()));
            }
        });
    }

    /// A message came in on platform `name`.
    pub fn message_in(&self, name: &str) {
        self.write(|record| {
            if let Some(entry) = platform_entry(record, name) {
                entry.insert("last_message_at".into(), json!(now_iso()));
            }
        });
    }

    /// Platform `name` polled (or received) just now.
    pub fn polled(&self, name: &str) {
        {
            let mut polls = self.polls.lock().unwrap_or_else(PoisonError::into_inner);
            let now = std::time::Instant::now();
            if polls
                .get(name)
                .is_some_and(|at| now.duration_since(*at) < POLL_NOTE_EVERY)
            {
                return;
            }
            polls.insert(name.to_owned(), now);
        }
        self.write(|record| {
            if let Some(entry) = platform_entry(record, name) {
                entry.insert("last_poll_at".into(), json!(now_iso()));
            }
        });
    }

    /// Sessions working on a turn or run now (written when it changes).
    pub fn active_agents(&self, count: usize) {
        let same = self.record.lock().unwrap_or_else(PoisonError::into_inner)["active_agents"]
            == json!(count);
        if !same {
            self.write(|record| record["active_agents"] = json!(count));
        }
    }

    fn write(&self, change: impl FnOnce(&mut Value)) {
        let mut record = self.record.lock().unwrap_or_else(PoisonError::into_inner);
        change(&mut record);
        record["updated_at"] = json!(now_iso());
        // Written whole and renamed into place: a reader never sees half a file.
        let tmp = self.path.with_extension("json.tmp");
        if std::fs::write(&tmp, record.to_string()).is_ok() {
            let _ = std::fs::rename(&tmp, &self.path);
        }
    }
}

fn platform_entry<'a>(record: &'a mut Value, name: &str) -> Option<&'a mut Map<String, Value>> {
    let platforms = record
        .as_object_mut()?
        .entry("platforms")
        .or_insert_with(|| json!({}));
    if !platforms.is_object() {
        *platforms = json!({});
    }
    let entry = platforms
        .as_object_mut()?
        .entry(name.to_owned())
        .or_insert_with(|| json!({}));
    if !entry.is_object() {
        *entry = json!({});
    }
    entry.as_object_mut()
}

/// The status a gateway of `home` last wrote, if any.
pub fn read(home: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(home.join(FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_written_through_in_the_references_shape() {
        let home = tempfile::tempdir().unwrap();
        let status = RuntimeStatus::start(home.path());
        status.platform("telegram", "connecting", None);
        status.platform("telegram", "retrying", Some("HTTP 401"));
        status.message_in("telegram");
        status.gateway("running");
        let read = read(home.path()).unwrap();
        assert_eq!(read["gateway_state"], "running");
        assert_eq!(read["platforms"]["telegram"]["state"], "retrying");
        assert_eq!(read["platforms"]["telegram"]["error_message"], "HTTP 401");
        assert!(read["platforms"]["telegram"]["last_message_at"].is_string());
        assert_eq!(read["pid"], std::process::id());
    }
}
