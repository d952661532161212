//! What a front-end asks for when it starts a session.

use std::path::PathBuf;

use crate::store::ResumeRequest;

/// A session to start: overrides of the configuration (the CLI's flags, an
/// API request's model, a chat's settings) plus where it comes from.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// `--provider`: the provider id, overriding `model.provider`.
    pub provider: Option<String>,
    /// `-m`: the model, overriding `model.default`.
    pub model: Option<String>,
    /// `-t`: the toolsets, overriding `toolsets:`.
    pub toolsets: Option<Vec<String>>,
    /// Who runs it, as stored in `sessions.source` (`cli`, `api_server`, `telegram` …);
    /// also the platform the system prompt names.
    pub source: String,
    /// An earlier session to continue.
    pub resume: Option<ResumeRequest>,
    /// Skills whose text rides in front of the first message (`-s`).
    pub skills: Vec<String>,
    /// Dangerous commands run without asking (`--yolo`).
    pub yolo: bool,
    /// API calls per turn (`--max-turns`), overriding `agent.max_turns`.
    pub max_turns: Option<u32>,
    /// The working directory tools run in.
    pub cwd: PathBuf,
    /// `--ignore-rules`: no SOUL.md, context files or memory.
    pub ignore_rules: bool,
    /// A person can answer questions (approvals, `clarify`) through events;
    /// otherwise dangerous commands are refused and `clarify` says nobody is there.
    pub interactive: bool,
    /// A conversation the client holds itself (OpenAI-style APIs send it with
    /// every request): the session takes this id and history instead of a new
    /// or stored one.
    pub seed: Option<Seed>,
    /// Title the session automatically after its first exchange (in the
    /// background, with `auxiliary.title_generation`'s model or the session's).
    pub auto_title: bool,
    /// Checkpoint project trees before tools change them (`--checkpoints`),
    /// whatever `checkpoints.enabled` says.
    pub checkpoints: bool,
    /// Where a gateway conversation comes from, stored on each session row
    /// it creates (the first, `/new`, compression continuations).
    pub routing: Option<hermes_state::session_db::SessionRouting>,
    /// Hooks of this session only (an editor's edit approvals), run before the process's.
    pub hooks: SessionHooks,
    /// An editor's files (its unsaved buffers), which `read_file` and
    /// `write_file` go through.
    pub client_files: Option<std::sync::Arc<dyn hermes_tools::ClientFiles>>,
}

/// Hooks a front-end adds to one session.
#[derive(Debug, Clone, Default)]
pub struct SessionHooks(pub Vec<std::sync::Arc<dyn hermes_tools::hooks::HookHandler>>);

impl PartialEq for SessionHooks {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|(a, b)| std::sync::Arc::ptr_eq(a, b))
    }
}

/// A client-held conversation to run a session on.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Seed {
    /// The session id to record under (created in the store when new, else
    /// continued: only the new messages are written).
    pub session_id: String,
    /// The conversation so far (not written again).
    pub history: Vec<hermes_protocol::Message>,
    /// Extra system text for this run only (the client's system messages);
    /// sent after the session's own prompt, never stored.
    pub ephemeral_prompt: Option<String>,
}

impl SessionSpec {
    /// A session for `source` in `cwd` with everything else from the configuration.
    pub fn new(source: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            provider: None,
            model: None,
            toolsets: None,
            source: source.into(),
            resume: None,
            skills: Vec::new(),
            yolo: false,
            max_turns: None,
            cwd: cwd.into(),
            ignore_rules: false,
            interactive: false,
            seed: None,
            auto_title: false,
            checkpoints: false,
            routing: None,
            hooks: SessionHooks::default(),
            client_files: None,
        }
    }
}

/// Something worth telling the user when a session starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Information (the offline fallback in use).
    Info(String),
    /// A problem the session works around (history off, a file blocked …).
    Warning(String),
}
