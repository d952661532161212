//! Runs one prompt as its own session of the shared session runtime.

use std::path::PathBuf;

use futures_util::future::BoxFuture;
use hermes_protocol::{Event, Op};
use hermes_session::{Notice, Seed, SessionError, SessionManager, SessionSpec};

use crate::runner::{Executor, Finished, Job, PromptError};

/// What every prompt's session shares.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionSettings {
    /// The working directory tools run in.
    pub cwd: PathBuf,
    /// `-m`: the model.
    pub model: Option<String>,
    /// `--provider`.
    pub provider: Option<String>,
    /// Model calls per prompt (`--max-turns`).
    pub max_turns: u32,
    /// Dangerous commands run without asking (otherwise they are refused:
    /// nobody is there to approve them).
    pub yolo: bool,
    /// System text sent to the model with every prompt, never stored or
    /// written to a trajectory.
    pub ephemeral_system_prompt: Option<String>,
}

/// Runs prompts through a [`SessionManager`], one session each.
#[derive(Debug, Clone)]
pub struct SessionExecutor {
    manager: SessionManager,
    settings: SessionSettings,
}

impl SessionExecutor {
    /// An executor starting sessions on `manager` with `settings`.
    pub fn new(manager: SessionManager, settings: SessionSettings) -> Self {
        Self { manager, settings }
    }

    /// The session spec for `job`: its toolsets, no context files or memory
    /// (as the reference's skip_context_files / skip_memory), nobody to ask.
    pub fn spec(&self, job: &Job) -> SessionSpec {
        let s = &self.settings;
        SessionSpec {
            provider: s.provider.clone(),
            model: s.model.clone(),
            toolsets: Some(job.toolsets.clone()),
            yolo: s.yolo,
            max_turns: Some(s.max_turns),
            ignore_rules: true,
            interactive: false,
            seed: s
                .ephemeral_system_prompt
                .as_ref()
                .filter(|p| !p.trim().is_empty())
                .map(|prompt| Seed {
                    session_id: hermes_session::session_id::new_session_id(),
                    history: Vec::new(),
                    ephemeral_prompt: Some(prompt.clone()),
                }),
            ..SessionSpec::new("batch", s.cwd.clone())
        }
    }

    async fn run_job(&self, job: &Job) -> Result<Finished, PromptError> {
        let mut conv = self
            .manager
            .start(self.spec(job))
            .await
            .map_err(|e| match e {
                // Configuration problems fail every prompt alike: stop the run.
                SessionError::Setup(_)
                | SessionError::Endpoint(_)
                | SessionError::Provider(_)
                | SessionError::Spec(_) => PromptError::Fatal(e.to_string()),
                SessionError::Store(_) | SessionError::Closed => PromptError::Failed(e.to_string()),
            })?;
        let notices: Vec<String> = conv
            .notices()
            .iter()
            .filter_map(|n| match n {
                Notice::Warning(w) => Some(w.clone()),
                Notice::Info(_) => None,
            })
            .collect();
        let mut messages = Vec::new();
        let last = conv
            .request(
                Op::UserInput {
                    text: job.prompt.clone(),
                },
                |ev| {
                    if let Event::MessageAppended { message } = ev {
                        messages.push(message.clone());
                    }
                },
            )
            .await;
        // The tools as the model was last sent them (MCP tools join after start-up).
        let info = conv.info();
        let tools = info.tool_schemas.to_vec();
        let _ = conv.shutdown("batch_complete").await;
        match last {
            Ok(Event::TurnComplete {
                reason,
                usage,
                api_calls,
                ..
            }) => Ok(Finished {
                messages,
                tools,
                end: reason,
                usage,
                api_calls,
                model: info.model,
                provider: info.provider,
                base_url: info.base_url,
                notices,
            }),
            Ok(Event::Error { message }) => Err(PromptError::Failed(message)),
            Ok(other) => Err(PromptError::Failed(format!(
                "the session ended the turn unexpectedly ({other:?})"
            ))),
            Err(e) => Err(PromptError::Failed(e.to_string())),
        }
    }
}

impl Executor for SessionExecutor {
    fn run<'a>(&'a self, job: &'a Job) -> BoxFuture<'a, Result<Finished, PromptError>> {
        Box::pin(self.run_job(job))
    }
}
