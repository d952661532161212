//! What the provider and its tools share: the API client, which Honcho
//! session and peers a Hermes session maps to (created on first use), and
//! the per-process recall state.

use std::collections::HashSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::api::{Api, PeerView};
use crate::settings::{HonchoSettings, SessionStrategy};

/// Honcho's longest session id.
const MAX_SESSION_ID: usize = 100;

/// The Honcho session and peers one Hermes session writes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scope {
    /// The Honcho session id.
    pub session: String,
    /// The user's peer id.
    pub user: String,
    /// The assistant's peer id.
    pub ai: String,
}

/// Mutable state across turns.
#[derive(Default)]
pub(crate) struct State {
    /// The turn in progress (from 1).
    pub turn: u32,
    /// A dialectic answer waiting for the next turn's recall.
    pub pending: Option<String>,
    /// Whether a dialectic has been asked yet (the first turn waits for one).
    pub dialectic_started: bool,
    /// The Hermes session last seen (hooks without one use it).
    pub last_session: Option<String>,
    /// Writes still in flight (mirrored memory adds).
    pub writes: Vec<tokio::task::JoinHandle<()>>,
}

/// The shared core.
pub(crate) struct Core {
    pub settings: HonchoSettings,
    pub api: Api,
    runtime: tokio::runtime::Handle,
    cwd: PathBuf,
    /// Whether sessions follow `sessionStrategy` (a terminal) or are one per
    /// Hermes session (a chat platform or the API server).
    follows_strategy: bool,
    /// Honcho sessions already created by this process.
    created: tokio::sync::Mutex<HashSet<String>>,
    pub state: Mutex<State>,
}

/// Honcho ids: letters, digits, `_` and `-`; anything else becomes `-`.
pub(crate) fn sanitize(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// A session id cut to Honcho's limit, with a hash of the original so two
/// long names sharing a prefix stay apart.
fn limit_session_id(sanitized: String, original: &str) -> String {
    if sanitized.len() <= MAX_SESSION_ID {
        return sanitized;
    }
    let digest = Sha256::digest(original.as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let prefix = sanitized[..MAX_SESSION_ID - hash.len() - 1].trim_end_matches('-');
    format!("{prefix}-{hash}")
}

/// The name of the git repository holding `dir`, if any.
fn repo_name(dir: &Path) -> Option<String> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
}

impl Core {
    /// A core for a session on `platform` started in `cwd`.
    pub(crate) fn new(
        settings: HonchoSettings,
        api: Api,
        runtime: tokio::runtime::Handle,
        cwd: PathBuf,
        platform: &str,
    ) -> Self {
        Self {
            settings,
            api,
            runtime,
            cwd,
            follows_strategy: matches!(platform, "" | "cli" | "acp" | "tui"),
            created: tokio::sync::Mutex::new(HashSet::new()),
            state: Mutex::new(State::default()),
        }
    }

    /// Runs `future` to completion on this (blocking-pool) thread.
    pub(crate) fn block<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Starts `future` on the runtime.
    pub(crate) fn spawn<F>(&self, future: F) -> tokio::task::JoinHandle<()>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.runtime.spawn(future)
    }

    /// The state, even after a panic elsewhere.
    pub(crate) fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The Honcho session name for a Hermes session, by `sessionStrategy`
    /// (the `sessions` map and the peer prefix included).
    pub(crate) fn session_name(&self, hermes_session: &str) -> String {
        let s = &self.settings;
        let prefixed = |base: String| match (&s.peer_name, s.session_peer_prefix) {
            (Some(peer), true) => format!("{peer}-{base}"),
            _ => base,
        };
        let per_session =
            !self.follows_strategy || s.session_strategy == SessionStrategy::PerSession;
        let name = if per_session && !hermes_session.is_empty() {
            prefixed(hermes_session.to_owned())
        } else if let Some(manual) = s.sessions.get(&*self.cwd.to_string_lossy()) {
            manual.clone()
        } else {
            let dir_name = || {
                self.cwd
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "hermes-default".to_owned())
            };
            match s.session_strategy {
                SessionStrategy::Global => s.workspace.clone(),
                SessionStrategy::PerRepo => prefixed(repo_name(&self.cwd).unwrap_or_else(dir_name)),
                _ => prefixed(dir_name()),
            }
        };
        limit_session_id(sanitize(&name), &name)
    }

    /// The scope for a Hermes session, created in Honcho on first use.
    pub(crate) async fn scope(&self, hermes_session: &str) -> Result<Scope, String> {
        if !hermes_session.is_empty() {
            self.state().last_session = Some(hermes_session.to_owned());
        }
        let session = self.session_name(hermes_session);
        let user = match &self.settings.peer_name {
            Some(peer) => sanitize(peer),
            None => sanitize(&format!("user-default-{session}")),
        };
        let scope = Scope {
            user,
            ai: sanitize(&self.settings.ai_peer),
            session,
        };
        let mut created = self.created.lock().await;
        if !created.contains(&scope.session) {
            if created.is_empty() {
                self.api.ensure_workspace().await?;
            }
            self.api.ensure_peer(&scope.user).await?;
            self.api.ensure_peer(&scope.ai).await?;
            self.api
                .ensure_session(
                    &scope.session,
                    &scope.user,
                    &scope.ai,
                    self.settings.observation,
                )
                .await?;
            created.insert(scope.session.clone());
        }
        Ok(scope)
    }

    /// The scope of the Hermes session last seen, when there was one.
    pub(crate) async fn last_scope(&self) -> Option<Scope> {
        let last = self.state().last_session.clone()?;
        self.scope(&last).await.ok()
    }

    /// A peer alias (`user`, `ai`) or id, as a peer id.
    pub(crate) fn peer(&self, scope: &Scope, alias: Option<&str>) -> String {
        match alias.map(str::trim).filter(|a| !a.is_empty()) {
            None | Some("user") => scope.user.clone(),
            Some("ai") => scope.ai.clone(),
            Some(other) => {
                let id = sanitize(other);
                if id == scope.ai { scope.ai.clone() } else { id }
            }
        }
    }

    /// Whose view answers questions about `target`: the assistant's own for
    /// itself; the assistant's view of others when it observes them; else
    /// the target's view of itself.
    pub(crate) fn view<'a>(&self, scope: &'a Scope, target: &'a str) -> PeerView<'a> {
        if target == scope.ai {
            PeerView {
                observer: &scope.ai,
                target: Some(&scope.ai),
            }
        } else if self.settings.observation.ai_observe_others {
            PeerView {
                observer: &scope.ai,
                target: Some(target),
            }
        } else {
            PeerView {
                observer: target,
                target: None,
            }
        }
    }

    /// Who records conclusions about `target` (observer, observed).
    pub(crate) fn conclusion_pair(&self, scope: &Scope, target: &str) -> (String, String) {
        if target == scope.ai || self.settings.observation.ai_observe_others {
            (scope.ai.clone(), target.to_owned())
        } else {
            (target.to_owned(), target.to_owned())
        }
    }

    /// Asks the dialectic agent about `target`; `cap` cuts the answer to
    /// `dialecticMaxChars` (for recall, not for the tool).
    pub(crate) async fn dialectic(
        &self,
        scope: &Scope,
        target: &str,
        question: &str,
        level: Option<&str>,
        cap: bool,
    ) -> Result<String, String> {
        let question = cut_at_word(question, self.settings.dialectic_max_input_chars, "");
        let level = match level {
            Some(l) if self.settings.dialectic_dynamic => l,
            _ => self.settings.reasoning_level.as_str(),
        };
        let view = match self.view(scope, target) {
            // The assistant asks about itself without a target.
            PeerView {
                observer,
                target: Some(t),
            } if t == observer => PeerView {
                observer,
                target: None,
            },
            view => view,
        };
        let answer = self.api.chat(&view, &question, level).await?;
        Ok(if cap {
            cut_at_word(&answer, self.settings.dialectic_max_chars, " …")
        } else {
            answer
        })
    }
}

/// `text` cut to `max` characters at a word boundary, `suffix` appended
/// when cut; unchanged when it fits (or `max` is 0).
pub(crate) fn cut_at_word(text: &str, max: usize, suffix: &str) -> String {
    if max == 0 || text.chars().count() <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max).collect();
    let cut = match head.rfind(' ') {
        Some(at) if at > 0 => &head[..at],
        _ => head.as_str(),
    };
    format!("{cut}{suffix}")
}
