//! Consent for shell hooks: `shell-hooks-allowlist.json` in HERMES_HOME records
//! each `(event, command)` a person approved, and when, so a hook someone else
//! slipped into config.yaml never runs unasked.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_state::time::UtcTime;
use serde::{Deserialize, Serialize};

/// The file's name in HERMES_HOME.
pub const ALLOWLIST_FILE: &str = "shell-hooks-allowlist.json";

/// One approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// When it was given (`YYYY-MM-DDTHH:MM:SS.ffffffZ`).
    pub approved_at: String,
    /// The exact command text.
    pub command: String,
    /// The event name.
    pub event: String,
    /// The script's modification time then, to notice later edits.
    pub script_mtime_at_approval: Option<String>,
    /// The script's SHA-256 then (ours; the reference keeps only the mtime):
    /// a hook whose script changed since is asked about again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_sha256_at_approval: Option<String>,
}

/// Whether a hook may run on an earlier approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Approved, and its script is what was approved.
    Approved,
    /// Approved once, but its script changed since: ask again.
    Changed,
    /// Never approved.
    Unknown,
}

/// The approvals on disk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowlist {
    /// Every approval.
    #[serde(default)]
    pub approvals: Vec<Approval>,
}

impl Allowlist {
    /// The file in `hermes_home`.
    pub fn path(hermes_home: &Path) -> PathBuf {
        hermes_home.join(ALLOWLIST_FILE)
    }

    /// Reads it; a missing or unreadable file is an empty list.
    pub fn load(hermes_home: &Path) -> Self {
        std::fs::read_to_string(Self::path(hermes_home))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// Writes it atomically.
    pub fn save(&self, hermes_home: &Path) -> std::io::Result<()> {
        let mut value = serde_json::to_value(self).map_err(std::io::Error::other)?;
        sort_keys(&mut value);
        let text = serde_json::to_string_pretty(&value).map_err(std::io::Error::other)?;
        hermes_fs::write_atomic(
            &Self::path(hermes_home),
            text.as_bytes(),
            hermes_fs::Access::Keep,
        )
    }

    /// The approval of `command` for `event`, if any.
    pub fn find(&self, event: &str, command: &str) -> Option<&Approval> {
        self.approvals
            .iter()
            .find(|a| a.event == event && a.command == command)
    }

    /// Whether `command` for `event` may run: approved, and its script
    /// unchanged since (by content when the approval recorded a hash, by
    /// modification time for approvals the reference wrote).
    pub fn standing(&self, event: &str, command: &str, home: Option<&Path>) -> Standing {
        let Some(approval) = self.find(event, command) else {
            return Standing::Unknown;
        };
        let unchanged = match &approval.script_sha256_at_approval {
            Some(hash) => script_sha256(command, home).as_ref() == Some(hash),
            None => match &approval.script_mtime_at_approval {
                Some(mtime) => script_mtime(command, home).as_ref() == Some(mtime),
                None => script_mtime(command, home).is_none(),
            },
        };
        if unchanged {
            Standing::Approved
        } else {
            Standing::Changed
        }
    }

    /// Records an approval now, replacing an older one for the same pair.
    pub fn approve(&mut self, event: &str, command: &str, home: Option<&Path>) {
        self.approvals
            .retain(|a| !(a.event == event && a.command == command));
        self.approvals.push(Approval {
            approved_at: now_iso(),
            command: command.to_owned(),
            event: event.to_owned(),
            script_mtime_at_approval: script_mtime(command, home),
            script_sha256_at_approval: script_sha256(command, home),
        });
    }

    /// Removes every approval of `command`; how many went.
    pub fn revoke(&mut self, command: &str) -> usize {
        let before = self.approvals.len();
        self.approvals.retain(|a| a.command != command);
        before - self.approvals.len()
    }
}

/// The script a command runs: the first word with a script extension, else the
/// first that looks like a path, else the first word (`~` expanded with `home`).
pub fn script_path(command: &str, home: Option<&Path>) -> Option<PathBuf> {
    const EXTS: [&str; 13] = [
        ".sh", ".bash", ".zsh", ".fish", ".py", ".pyw", ".rb", ".pl", ".lua", ".js", ".mjs",
        ".cjs", ".ts",
    ];
    let words = shlex::split(command)?;
    let pick = words
        .iter()
        .find(|w| EXTS.iter().any(|e| w.ends_with(e)))
        .or_else(|| words.iter().find(|w| w.contains('/') || w.starts_with('~')))
        .or_else(|| words.first())?;
    Some(expand_tilde(pick, home))
}

/// `~` or `~/…` at the start of `word` with the home directory.
pub fn expand_tilde(word: &str, home: Option<&Path>) -> PathBuf {
    match (word.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(word),
    }
}

/// The modification time of the command's script, ISO with `Z`; `None` when missing.
pub fn script_mtime(command: &str, home: Option<&Path>) -> Option<String> {
    let path = script_path(command, home)?;
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(iso_z(modified))
}

/// The SHA-256 (hex) of the command's script; `None` when missing.
pub fn script_sha256(command: &str, home: Option<&Path>) -> Option<String> {
    use sha2::Digest;
    let bytes = std::fs::read(script_path(command, home)?).ok()?;
    let digest = sha2::Sha256::digest(&bytes);
    Some(digest.iter().map(|b| format!("{b:02x}")).collect())
}

fn now_iso() -> String {
    iso_z(SystemTime::now())
}

fn iso_z(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = i64::try_from(since.as_secs()).unwrap_or(i64::MAX);
    format!(
        "{}.{:06}Z",
        UtcTime::from_unix(secs).iso(),
        since.subsec_micros()
    )
}

fn sort_keys(value: &mut serde_json::Value) {
    // serde_json's map keeps keys sorted unless preserve_order is on; sort
    // explicitly so the file is stable either way.
    if let serde_json::Value::Object(map) = value {
        let mut entries: Vec<_> = std::mem::take(map).into_iter().collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (k, mut v) in entries {
            sort_keys(&mut v);
            map.insert(k, v);
        }
    } else if let serde_json::Value::Array(items) = value {
        items.iter_mut().for_each(sort_keys);
    }
}
