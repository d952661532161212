//! The ops that change a session between turns: a new or resumed session,
//! undo, the model, the approval mode, the title and the prompt overlay.
//! Each answers with exactly one event.

use hermes_agent::ModelSwitch;
use hermes_protocol::{Event, Op, Role};
use hermes_state::context_cache::ContextLengthCache;
use hermes_tools::approval::ApprovalMode;

use super::task::SessionTask;
use crate::endpoint::{Endpoint, SetupError};
use crate::setup::Setup;
use crate::store::{self, CachedLimits, ResumeRequest, SessionRecorder};

fn error(message: impl Into<String>) -> Event {
    Event::Error {
        message: message.into(),
    }
}

impl SessionTask {
    /// Carries out one command op.
    pub(super) fn command(&mut self, op: Op) -> Event {
        match op {
            Op::NewSession => self.new_session(),
            Op::Undo { turns } => match self.agent.undo_turns(turns) {
                Ok(Some((text, removed))) => Event::Undone {
                    text: Some(text),
                    removed,
                },
                Ok(None) => Event::Undone {
                    text: None,
                    removed: 0,
                },
                Err(e) => error(format!("undone here, but the store kept them: {e}")),
            },
            Op::SwitchModel { target } => self.switch_model(&target),
            Op::Resume { key } => self.resume(&key),
            Op::SetYolo { on } => {
                self.gate.set_mode(if on {
                    ApprovalMode::Off
                } else {
                    ApprovalMode::Manual
                });
                Event::Ack
            }
            Op::SetTitle { title } => self.set_title(&title),
            Op::SetPromptOverlay { overlay } => {
                let base = self.base_prompt();
                let prompt = match overlay.filter(|o| !o.trim().is_empty()) {
                    Some(text) => format!("{base}\n\n{text}"),
                    None => base,
                };
                self.agent.replace_system_prompt(prompt);
                Event::Ack
            }
            Op::ReloadMcp => self.reload_mcp(),
            // Turns, signals and shutdown are the task's own.
            Op::UserInput { .. }
            | Op::UserInputWithImages { .. }
            | Op::Steer { .. }
            | Op::Interrupt
            | Op::ApprovalAnswer { .. }
            | Op::ClarifyAnswer { .. }
            | Op::Retry
            | Op::ContinueTurn
            | Op::Compress { .. }
            | Op::StopProcesses
            | Op::Announce
            | Op::Shutdown { .. } => Event::Ack,
        }
    }

    /// `/reload-mcp`: applies the config's `mcp_servers:` now; a session that
    /// started with none gets its MCP view here.
    fn reload_mcp(&mut self) -> Event {
        let names = match self.services.reload_mcp() {
            Ok(names) => names,
            Err(e) => return error(format!("cannot reload MCP servers: {e}")),
        };
        if !self.agent.has_dynamic_tools() {
            let route = self.agent.active_route().clone();
            let sampler = std::sync::Arc::new(crate::mcp::ModelSampler {
                provider: route.provider,
                model: route.model,
            });
            let (view, _) = crate::mcp::session_tools(
                self.services.setup(),
                self.services.mcp().as_ref(),
                &self.toolsets,
                sampler,
            );
            self.agent.set_dynamic_tools(view);
        }
        Event::Status {
            message: if names.is_empty() {
                "MCP: no servers configured (add one with `hermes mcp add`).".to_owned()
            } else {
                format!(
                    "MCP: reconnecting {} — their tools reach the next request.",
                    names.join(", ")
                )
            },
        }
    }

    /// The system prompt as the session started it (before any overlay).
    fn base_prompt(&mut self) -> String {
        if self.base_prompt.is_none() {
            self.base_prompt = self
                .agent
                .messages()
                .first()
                .filter(|m| m.role == Role::System)
                .map(|m| m.text().to_owned());
        }
        self.base_prompt.clone().unwrap_or_default()
    }

    fn recorder(
        &self,
        id: &str,
        model: &str,
        ep: &Endpoint,
    ) -> Option<Box<dyn hermes_agent::MessageStore>> {
        self.store.as_ref().map(|db| {
            Box::new(SessionRecorder::new(
                db.clone(),
                id,
                model,
                &ep.provider,
                &ep.base_url,
            )) as Box<dyn hermes_agent::MessageStore>
        })
    }

    /// `NewSession`: end this session in the store and start an empty one.
    fn new_session(&mut self) -> Event {
        let id = crate::session_id::new_session_id();
        let old = self.agent.options().session_id.clone();
        if let Some(db) = &self.store {
            let prompt = self
                .agent
                .messages()
                .first()
                .filter(|m| m.role == Role::System)
                .map(|m| m.text().to_owned())
                .unwrap_or_default();
            let opts = self.agent.options();
            // A session nothing was said in leaves no trace behind.
            let _ = db.discard_if_empty(&old);
            let created = db.end_session(&old, "new_session").and_then(|()| {
                db.create_session(&store::new_session_row(
                    &id,
                    &self.spec.source,
                    &opts.model,
                    &prompt,
                    &opts.cwd.display().to_string(),
                    opts.max_turns,
                ))
                .and_then(|()| match &self.spec.routing {
                    Some(routing) => db.set_routing(&id, routing),
                    None => Ok(()),
                })
            });
            if let Err(e) = created {
                return error(format!("could not start a new session: {e}"));
            }
        }
        let model = self.agent.options().model.clone();
        let recorder = self.recorder(&id, &model, &self.endpoint);
        self.agent.start_new_session(id.clone(), recorder);
        self.last_input = None;
        Event::SessionChanged {
            session_id: id,
            reason: "new".into(),
            messages: 0,
        }
    }

    /// `Resume`: continue another stored session here.
    fn resume(&mut self, key: &str) -> Event {
        let Some(db) = self.store.clone() else {
            return error("Session history is off: there is nothing to resume.");
        };
        let request = ResumeRequest::Resume(key.to_owned());
        let found = match store::find(db.as_ref(), &request, &self.spec.source) {
            Ok(found) => found,
            Err(e) => return error(e.0),
        };
        let current = self.agent.options().session_id.clone();
        let switched = db
            .end_session(&current, "resumed_other")
            .and_then(|()| db.reopen_session(&found.id));
        if let Err(e) = switched {
            return error(format!("could not resume {}: {e}", found.id));
        }
        let count = found.history.len();
        let model = self.agent.options().model.clone();
        let recorder = self.recorder(&found.id, &model, &self.endpoint);
        self.agent.replace_conversation(
            found.id.clone(),
            found.system_prompt,
            found.history,
            recorder,
        );
        self.base_prompt = None;
        Event::SessionChanged {
            session_id: found.id,
            reason: "resumed".into(),
            messages: count,
        }
    }

    /// `SwitchModel`: `MODEL` on the current provider, or `PROVIDER:MODEL`.
    fn switch_model(&mut self, target: &str) -> Event {
        if self.endpoint.provider == "local" {
            return error("The embedded local model cannot be switched from here.");
        }
        let setup = self.services.setup();
        let target = match resolve_model_target(setup, &self.endpoint, target.trim()) {
            Ok(t) => t,
            Err(e) => return error(e.to_string()),
        };
        let provider = match self.services.remote(&target) {
            Ok(p) => p,
            Err(e) => return error(e.to_string()),
        };
        let model = target.model.clone().unwrap_or_default();
        // The window known for the new model, and where a confirmed one is remembered.
        let limits = ContextLengthCache::new(setup.home.context_length_cache());
        let context_length = setup
            .config
            .model
            .context_length
            .or_else(|| limits.get(&model, &target.base_url));
        let id = self.agent.options().session_id.clone();
        let store = self.recorder(&id, &model, &target);
        self.agent.switch_model(ModelSwitch {
            provider,
            model: model.clone(),
            context_length,
            limits: Some(Box::new(CachedLimits::new(limits, target.base_url.clone()))),
            store,
        });
        let event = Event::ModelChanged {
            model,
            provider: target.provider.clone(),
            base_url: target.base_url.clone(),
        };
        self.endpoint = target;
        event
    }

    fn set_title(&mut self, title: &str) -> Event {
        let Some(db) = &self.store else {
            return error("Session history is off: there is nothing to title.");
        };
        match db.set_title(&self.agent.options().session_id, title) {
            Ok(()) => Event::Ack,
            Err(e) => error(e.0),
        }
    }
}

/// `PROVIDER:MODEL` picks both when PROVIDER is a provider the config knows (a
/// known provider that cannot be used, e.g. for a missing key, is an error to
/// show); anything else — `llama3:8b` included — is a model on the current provider.
pub fn resolve_model_target(
    setup: &Setup,
    current: &Endpoint,
    arg: &str,
) -> Result<Endpoint, SetupError> {
    if let Some((provider, model)) = arg.split_once(':')
        && !provider.is_empty()
        && !model.is_empty()
    {
        match setup.endpoint(Some(provider), Some(model)) {
            Ok(ep) => return Ok(ep),
            Err(SetupError::UnknownProvider { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Endpoint {
        model: Some(arg.to_owned()),
        ..current.clone()
    })
}
