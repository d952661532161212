//! Approval policy: hardline floor, `--yolo`/`approvals.mode: off`,
//! session and permanent allowlists, and asking a person through an [`Approver`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::json;

use super::{Verdict, classify_with_home};

pub use hermes_protocol::ApprovalChoice;

/// What an [`Approver`] is asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The full command text.
    pub command: String,
    /// Why it was flagged (also the allowlist key).
    pub reason: String,
}

/// Something that can ask a person (a terminal prompt, a chat message, a TUI dialog).
pub trait Approver: Send + Sync {
    /// Asks about one command; must resolve (a timeout answers [`ApprovalChoice::Deny`]).
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalChoice>;
}

/// `approvals.mode` in config.yaml (`smart` is treated as `manual` here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalMode {
    /// Dangerous commands need approval.
    #[default]
    Manual,
    /// Dangerous commands run without asking (`--yolo`); hardline ones never do.
    Off,
}

impl ApprovalMode {
    /// Reads `approvals.mode` (`manual`, `smart`, `off`; YAML `false` means off too).
    pub fn from_section(section: &hermes_state::settings::ApprovalsSection) -> Self {
        match section.mode.as_deref() {
            Some("off") => ApprovalMode::Off,
            _ => ApprovalMode::Manual,
        }
    }
}

/// Who, if anyone, can answer an approval request.
#[derive(Clone)]
pub enum Presence {
    /// A person is at a terminal (or another front-end) and can be asked.
    Interactive(Arc<dyn Approver>),
    /// Nobody can answer (one-shot `-q`/`-z`, stdin not a TTY, scripts): refuse at once.
    NonInteractive,
    /// A delegated subagent: its parent's user is not asked; refuse at once.
    Subagent,
}

impl std::fmt::Debug for Presence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Presence::Interactive(_) => "Interactive",
            Presence::NonInteractive => "NonInteractive",
            Presence::Subagent => "Subagent",
        })
    }
}

/// The gate's answer for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it; `note` tells the model it needed (and got) approval.
    Allow {
        /// Set when a person approved a flagged command.
        note: Option<String>,
    },
    /// Do not run it; `result` is the tool result JSON the model reads.
    Refuse {
        /// The tool result (JSON text) explaining the refusal.
        result: String,
        /// A one-line status for front-ends.
        status: String,
    },
}

/// Per-session approval state and policy; shared by every tool call of a session.
#[derive(Debug)]
pub struct ApprovalGate {
    /// `true` when approvals are off (`--yolo`); switchable mid-session (`/yolo`).
    off: AtomicBool,
    presence: Presence,
    session: Mutex<HashSet<String>>,
    permanent: Mutex<HashSet<String>>,
    /// `config.yaml` that "always" answers are saved to; `None` keeps them in memory.
    config_path: Option<PathBuf>,
    /// `approvals.deny` globs: refused like hardline, even with `--yolo`.
    deny: Vec<String>,
    /// How long a person has to answer before the command is denied.
    timeout: Duration,
}

/// `approvals.timeout` default: an unanswered prompt denies after a minute.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

impl Default for ApprovalGate {
    fn default() -> Self {
        Self::new(ApprovalMode::Manual, Presence::NonInteractive)
    }
}

impl ApprovalGate {
    /// A gate with empty allowlists.
    pub fn new(mode: ApprovalMode, presence: Presence) -> Self {
        Self {
            off: AtomicBool::new(mode == ApprovalMode::Off),
            presence,
            session: Mutex::new(HashSet::new()),
            permanent: Mutex::new(HashSet::new()),
            config_path: None,
            deny: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Adds `approvals.deny` globs (case-insensitive, matched against the whole command).
    pub fn with_deny(self, globs: impl IntoIterator<Item = String>) -> Self {
        let mut deny = self.deny;
        deny.extend(globs.into_iter().map(|g| g.to_lowercase()));
        Self { deny, ..self }
    }

    /// Sets how long an [`Approver`] may take before the answer counts as deny.
    pub fn with_timeout(self, timeout: Duration) -> Self {
        Self { timeout, ..self }
    }

    /// Adds `command_allowlist` entries (reasons or command globs) and where to save new ones.
    pub fn with_allowlist(
        self,
        entries: impl IntoIterator<Item = String>,
        config_path: Option<PathBuf>,
    ) -> Self {
        if let Ok(mut set) = self.permanent.lock() {
            set.extend(entries);
        }
        Self {
            config_path,
            ..self
        }
    }

    /// A gate for a subagent: same mode and allowlists, but nobody to ask.
    pub fn for_subagent(&self) -> Self {
        self.with_presence(Presence::Subagent)
    }

    /// A copy with the same mode, allowlists and config file but another way to ask.
    pub fn with_presence(&self, presence: Presence) -> Self {
        let mut gate = Self::new(self.mode(), presence);
        gate.config_path = self.config_path.clone();
        gate.deny = self.deny.clone();
        gate.timeout = self.timeout;
        if let (Ok(mut dst), Ok(src)) = (gate.permanent.lock(), self.permanent.lock()) {
            dst.extend(src.iter().cloned());
        }
        if let (Ok(mut dst), Ok(src)) = (gate.session.lock(), self.session.lock()) {
            dst.extend(src.iter().cloned());
        }
        gate
    }

    /// The configured mode.
    pub fn mode(&self) -> ApprovalMode {
        if self.off.load(Ordering::Relaxed) {
            ApprovalMode::Off
        } else {
            ApprovalMode::Manual
        }
    }

    /// Switches approvals on or off for the rest of the session (the REPL's `/yolo`).
    pub fn set_mode(&self, mode: ApprovalMode) {
        self.off.store(mode == ApprovalMode::Off, Ordering::Relaxed);
    }

    /// Whether a person can be asked (an interactive front-end is attached).
    pub fn is_interactive(&self) -> bool {
        matches!(self.presence, Presence::Interactive(_))
    }

    /// Decides whether `command` may run, asking a person when policy needs one.
    pub async fn check(&self, command: &str) -> Decision {
        self.check_with_home(command, None).await
    }

    /// [`check`](Self::check), also treating `home` (the resolved `$HOME`) like `~`.
    pub async fn check_with_home(&self, command: &str, home: Option<&Path>) -> Decision {
        let verdict = classify_with_home(command, home);
        self.decide(command, verdict, None).await
    }

    /// [`check_with_home`](Self::check_with_home), telling `observers` (the
    /// `pre_approval_request` / `post_approval_response` hooks) when a person is asked.
    /// The command is judged as it would run on `host`: the scripts it runs
    /// are read, globs in its command word resolved.
    pub async fn check_observed(
        &self,
        command: &str,
        host: &super::Host,
        observers: Option<(&crate::hooks::Hooks, crate::hooks::HookSite<'_>)>,
    ) -> Decision {
        let verdict = if host.files.is_some() {
            // Reading another machine's scripts runs commands there: off
            // the async threads. A failure to judge asks, never allows.
            let (text, host) = (command.to_owned(), host.clone());
            tokio::task::spawn_blocking(move || super::classify_on(&text, &host))
                .await
                .unwrap_or_else(|_| Verdict::Dangerous {
                    reason: "the command could not be checked".to_owned(),
                })
        } else {
            super::classify_on(command, host)
        };
        self.decide(command, verdict, observers).await
    }

    /// Decides an action that is not a shell command but needs approval like
    /// a dangerous one (`subject` is shown to the person, `reason` is why and
    /// the allowlist key).
    pub async fn check_flagged(
        &self,
        subject: &str,
        reason: &str,
        observers: Option<(&crate::hooks::Hooks, crate::hooks::HookSite<'_>)>,
    ) -> Decision {
        let verdict = Verdict::Dangerous {
            reason: reason.to_owned(),
        };
        self.decide(subject, verdict, observers).await
    }

    /// Applies policy to a verdict already reached.
    async fn decide(
        &self,
        command: &str,
        verdict: Verdict,
        observers: Option<(&crate::hooks::Hooks, crate::hooks::HookSite<'_>)>,
    ) -> Decision {
        let reason = match verdict {
            Verdict::Hardline { reason } => {
                let message = format!(
                    "BLOCKED (hardline): {reason}. This command is on the unconditional blocklist \
                     and cannot be executed via the agent — not even with --yolo or \
                     approvals.mode=off. Do not retry or rephrase it. If the user genuinely needs \
                     it, they must run it themselves in a terminal outside the agent."
                );
                return refuse(command, &reason, &message, true);
            }
            Verdict::Dangerous { reason } => reason,
            Verdict::Safe => String::new(),
        };
        if let Some(rule) = self.denied_by_user(command) {
            let message = format!(
                "BLOCKED: command matches the user's deny rule '{rule}' (approvals.deny in \
                 config.yaml). It cannot be run, not even with --yolo or approvals.mode=off. \
                 Do not retry or rephrase this command; find another approach or ask the user."
            );
            return refuse(
                command,
                &format!("user deny rule '{rule}'"),
                &message,
                false,
            );
        }
        if reason.is_empty() {
            return Decision::Allow { note: None };
        }
        if self.mode() == ApprovalMode::Off || self.allowed(command, &reason) {
            return Decision::Allow { note: None };
        }
        let approver = match &self.presence {
            Presence::Interactive(a) => a.clone(),
            Presence::NonInteractive => {
                let message = format!(
                    "BLOCKED: command flagged as dangerous ({reason}) and this session is \
                     non-interactive, so nobody can approve it. It was not run. Find a safer \
                     alternative that avoids it. The user can allow it by rerunning hermes with \
                     --yolo, by setting approvals.mode: off in config.yaml, or by adding \
                     \"{reason}\" to command_allowlist in config.yaml."
                );
                return refuse(command, &reason, &message, false);
            }
            Presence::Subagent => {
                let message = format!(
                    "BLOCKED: command flagged as dangerous ({reason}); subagents cannot ask the \
                     user for approval, so it was not run. Use a safer alternative, or report \
                     back to the parent agent that this command needs the user's approval."
                );
                return refuse(command, &reason, &message, false);
            }
        };
        self.ask_person(approver.as_ref(), command, &reason, observers)
            .await
    }

    /// Puts a flagged command to a person (telling the approval hooks), and
    /// records a "session" or "always" answer.
    async fn ask_person(
        &self,
        approver: &dyn Approver,
        command: &str,
        reason: &str,
        observers: Option<(&crate::hooks::Hooks, crate::hooks::HookSite<'_>)>,
    ) -> Decision {
        let reason = reason.to_owned();
        let request = ApprovalRequest {
            command: command.to_owned(),
            reason: reason.clone(),
        };
        let observe = |event, extra: Option<&'static str>| {
            let fields = crate::hooks::object([
                ("command", serde_json::json!(command)),
                ("description", serde_json::json!(reason)),
                ("pattern_key", serde_json::json!(reason)),
                ("surface", serde_json::json!("cli")),
            ]);
            async move {
                if let Some((hooks, site)) = observers
                    && hooks.wants(event, None)
                {
                    let mut fields = fields;
                    if let Some(choice) = extra {
                        fields.insert("choice".into(), serde_json::json!(choice));
                    }
                    hooks.fire(event, site, None, fields).await;
                }
            }
        };
        observe(crate::hooks::HookEvent::PreApprovalRequest, None).await;
        let answer = tokio::time::timeout(self.timeout, approver.ask(&request)).await;
        let label = match &answer {
            Err(_) => "timeout",
            Ok(ApprovalChoice::Once) => "once",
            Ok(ApprovalChoice::Session) => "session",
            Ok(ApprovalChoice::Always) => "always",
            Ok(ApprovalChoice::Deny) => "deny",
        };
        observe(crate::hooks::HookEvent::PostApprovalResponse, Some(label)).await;
        let choice = answer.unwrap_or(ApprovalChoice::Deny);
        match choice {
            ApprovalChoice::Deny => {
                let message = format!(
                    "BLOCKED: the user denied this command ({reason}). Do not retry it; ask the \
                     user how they want to proceed or use a different approach."
                );
                refuse(command, &reason, &message, false)
            }
            ApprovalChoice::Once => approved(&reason),
            ApprovalChoice::Session => {
                if let Ok(mut s) = self.session.lock() {
                    s.insert(reason.clone());
                }
                approved(&reason)
            }
            ApprovalChoice::Always => {
                if let Ok(mut s) = self.permanent.lock() {
                    s.insert(reason.clone());
                }
                if let Some(path) = &self.config_path {
                    // Failing to save must not undo the user's "yes" for this run.
                    let _ = persist_allowlist(path, &reason);
                }
                approved(&reason)
            }
        }
    }

    fn denied_by_user(&self, command: &str) -> Option<&str> {
        let lowered = command.trim().to_lowercase();
        self.deny.iter().map(String::as_str).find(|rule| {
            globset::Glob::new(rule)
                .map(|g| g.compile_matcher().is_match(&lowered))
                .unwrap_or(false)
        })
    }

    fn allowed(&self, command: &str, reason: &str) -> bool {
        if self.session.lock().is_ok_and(|s| s.contains(reason)) {
            return true;
        }
        let Ok(permanent) = self.permanent.lock() else {
            return false;
        };
        if permanent.contains(reason) {
            return true;
        }
        // Command globs only apply to simple commands: `ls; rm -rf x` must not ride on `ls *`.
        let compound = ["\n", "&&", "||", ";", "&", "|", "<", ">", "`", "$("]
            .iter()
            .any(|op| command.contains(op));
        !compound
            && permanent.iter().any(|entry| {
                globset::Glob::new(entry)
                    .map(|g| g.compile_matcher().is_match(command.trim()))
                    .unwrap_or(false)
            })
    }
}

fn approved(reason: &str) -> Decision {
    Decision::Allow {
        note: Some(format!(
            "Command required approval ({reason}) and was approved by the user."
        )),
    }
}

fn refuse(command: &str, reason: &str, message: &str, hardline: bool) -> Decision {
    let kind = if hardline { "hardline" } else { "dangerous" };
    Decision::Refuse {
        result: blocked_json(command, reason, message, hardline),
        status: format!("Refused {kind} command ({reason}): {}", preview(command)),
    }
}

/// The tool result a refused command produces (the reference's `status: blocked` shape).
pub fn blocked_json(command: &str, reason: &str, message: &str, hardline: bool) -> String {
    json!({
        "output": "",
        "exit_code": -1,
        "error": message,
        "status": "blocked",
        "hardline": hardline,
        "description": reason,
        "command": command,
    })
    .to_string()
}

fn preview(command: &str) -> String {
    let one_line = command.replace('\n', " ");
    if one_line.chars().count() > 120 {
        let cut: String = one_line.chars().take(117).collect();
        format!("{cut}...")
    } else {
        one_line
    }
}

/// Appends `entry` to the top-level `command_allowlist` list of `config.yaml`.
pub(crate) fn persist_allowlist(path: &Path, entry: &str) -> std::io::Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let quoted = serde_json::to_string(entry).unwrap_or_else(|_| format!("\"{entry}\""));
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("command_allowlist:"));
    match header {
        Some(i) => {
            let rest = lines[i]["command_allowlist:".len()..].trim().to_owned();
            if rest.is_empty() {
                lines.insert(i + 1, format!("  - {quoted}"));
            } else {
                // A flow list (`[]` or `[a, b]`): rewrite it as a block list.
                let inner = rest.trim_start_matches('[').trim_end_matches(']');
                let mut items: Vec<String> = inner
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| format!("  - {s}"))
                    .collect();
                items.push(format!("  - {quoted}"));
                lines[i] = "command_allowlist:".into();
                for (k, item) in items.into_iter().enumerate() {
                    lines.insert(i + 1 + k, item);
                }
            }
        }
        None => {
            lines.push("command_allowlist:".into());
            lines.push(format!("  - {quoted}"));
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    hermes_fs::write_atomic(path, out.as_bytes(), hermes_fs::Access::Keep)
}
