//! What each slash command does to the live session.

use std::io::Write;

use anyhow::{Context, Result};
use hermes_protocol::{Event, Role};
use hermes_state::context_cache::ContextLengthCache;
use hermes_state::session_db::SessionDb;
use tokio_util::sync::CancellationToken;

use super::{Next, Repl, commands};
use crate::history::{self, DbStore, ResumeRequest};
use crate::render::{Renderer, Verbosity, preview};
use crate::runtime::Runtime;
use crate::session_id::new_session_id;
use crate::setup::Setup;

/// Built-in personalities: the reference's names, our own wording. Config
/// `agent.personalities` adds to or overrides them.
const PERSONALITIES: &[(&str, &str)] = &[
    ("helpful", "Be a warm, helpful and friendly assistant."),
    (
        "concise",
        "Answer briefly. Skip preamble; say only what matters.",
    ),
    (
        "technical",
        "Answer as a precise technical expert, with exact details.",
    ),
    (
        "creative",
        "Look for unusual, inventive angles and suggest fresh ideas.",
    ),
    (
        "teacher",
        "Explain patiently, step by step, with small examples.",
    ),
    (
        "kawaii",
        "Be cheerful and cute, with kaomoji and sparkles in every reply.",
    ),
    (
        "catgirl",
        "Speak as a playful cat-like assistant who says nya now and then.",
    ),
    (
        "pirate",
        "Talk like a seafaring pirate captain who loves solving puzzles.",
    ),
    (
        "shakespeare",
        "Reply in an Elizabethan, theatrical style with flourish.",
    ),
    (
        "surfer",
        "Keep it relaxed and sunny, like a laid-back surfer.",
    ),
    (
        "noir",
        "Narrate like a hard-boiled detective in a rainy city.",
    ),
    ("uwu", "Speak in an exaggerated soft, cutesy uwu style."),
    (
        "philosopher",
        "Consider the deeper why behind each question as you answer it.",
    ),
    (
        "hype",
        "Be wildly enthusiastic and energetic about everything.",
    ),
];

impl Repl {
    /// Runs the command `name` (canonical) with `arg`.
    pub(super) async fn dispatch(&mut self, name: &str, arg: &str) -> Result<Next> {
        let mut err = std::io::stderr();
        match name {
            "quit" => return Ok(Next::Quit),
            "help" => write!(err, "{}", commands::help())?,
            "new" => self.new_session()?,
            "undo" => {
                let n = arg.parse::<usize>().unwrap_or(1).max(1);
                self.undo(n)?;
            }
            "retry" => return self.retry(),
            "model" => self.model(arg).await?,
            "compress" => self.compress(arg).await?,
            "usage" => write!(
                err,
                "{}",
                self.tally.report(&self.session.agent.options().model)
            )?,
            "status" => write!(err, "{}", self.status())?,
            "title" => self.title(arg)?,
            "resume" => self.resume(arg)?,
            "yolo" => {
                self.yolo = !self.yolo;
                self.apply_approvals();
                if self.yolo {
                    writeln!(
                        err,
                        "⚡ YOLO mode ON: dangerous commands run without asking."
                    )?;
                } else {
                    writeln!(err, "YOLO mode OFF: dangerous commands ask first.")?;
                }
            }
            "tools" => write!(err, "{}", self.tools())?,
            "skills" => write!(
                err,
                "{}",
                crate::skills_cmd::listing(self.session.home.root())
            )?,
            "personality" => self.personality(arg)?,
            "queue" | "steer" if arg.is_empty() => writeln!(err, "Usage: /{name} <prompt>")?,
            "queue" => return Ok(Next::Send(arg.to_owned())),
            "steer" => {
                writeln!(err, "No turn is running; sending it as a message.")?;
                return Ok(Next::Send(arg.to_owned()));
            }
            "stop" => writeln!(
                err,
                "No background processes are running. (Ctrl+C stops a running turn.)"
            )?,
            other => writeln!(err, "/{other} is not available here yet.")?,
        }
        Ok(Next::Continue)
    }

    /// `/new`: end this session in the store and start an empty one.
    fn new_session(&mut self) -> Result<()> {
        let id = new_session_id();
        let old = self.session.id().to_owned();
        let agent = &mut self.session.agent;
        if let Some(path) = &self.session.db_path {
            let mut db = SessionDb::open(path).context("opening the session store")?;
            db.end_session(&old, "new_session")?;
            let prompt = agent
                .messages()
                .first()
                .filter(|m| m.role == Role::System)
                .map(|m| m.text().to_owned())
                .unwrap_or_default();
            let opts = agent.options();
            history::create(
                &mut db,
                &id,
                &opts.model,
                &prompt,
                &opts.cwd.display().to_string(),
                opts.max_turns,
            )?;
            agent.set_store(Box::new(store_for(
                db,
                &id,
                &opts.model,
                &self.session.runtime,
            )));
        }
        agent.start_new_session(id.clone());
        self.tally = super::Tally::default();
        self.last_input = None;
        writeln!(std::io::stderr(), "New session started: {id}")?;
        Ok(())
    }

    /// `/undo [N]`: drop the last N user turns; their text comes back in the prompt.
    fn undo(&mut self, n: usize) -> Result<()> {
        let mut err = std::io::stderr();
        match self.session.agent.undo_turns(n) {
            Ok(Some((text, removed))) => {
                writeln!(
                    err,
                    "Undid {} message{}: \"{}\"",
                    removed,
                    if removed == 1 { "" } else { "s" },
                    preview(&text, 60)
                )?;
                self.prefill = Some(text);
            }
            Ok(None) => writeln!(err, "No messages to undo.")?,
            Err(e) => writeln!(err, "warning: undone here, but the store kept them: {e}")?,
        }
        Ok(())
    }

    /// `/retry`: undo the last turn and send its message again.
    fn retry(&mut self) -> Result<Next> {
        match self.session.agent.undo_turns(1) {
            Ok(Some((text, _))) => Ok(Next::Send(text)),
            Ok(None) => match self.last_input.clone() {
                Some(text) => Ok(Next::Send(text)),
                None => {
                    writeln!(std::io::stderr(), "No message to retry.")?;
                    Ok(Next::Continue)
                }
            },
            Err(e) => {
                writeln!(std::io::stderr(), "error: {e}")?;
                Ok(Next::Continue)
            }
        }
    }

    /// `/model [provider:model]`: show, or switch for the rest of the session.
    async fn model(&mut self, arg: &str) -> Result<()> {
        let mut err = std::io::stderr();
        let rt = &self.session.runtime;
        if arg.is_empty() {
            writeln!(
                err,
                "Model: {} via {} ({})\nSwitch with /model MODEL or /model PROVIDER:MODEL",
                self.session.agent.options().model,
                rt.provider,
                rt.base_url
            )?;
            return Ok(());
        }
        if rt.provider == "local" {
            writeln!(
                err,
                "The embedded local model cannot be switched from here."
            )?;
            return Ok(());
        }
        let setup = Setup::load(self.run.ignore_user_config)?;
        let target = match resolve_target(&setup, rt, arg) {
            Ok(t) => t,
            Err(e) => {
                writeln!(err, "error: {e:#}")?;
                return Ok(());
            }
        };
        let provider =
            crate::chat::remote_provider(&target, &setup.home, &setup.config, &setup.env)?;
        let model = target.model.clone().unwrap_or_default();
        self.session
            .agent
            .set_primary_route(provider, model.clone());
        // The window known for the new model, and where a confirmed one is remembered.
        let limits = ContextLengthCache::new(setup.home.context_length_cache());
        if let Some(tokens) = setup
            .config
            .model
            .context_length
            .or_else(|| limits.get(&model, &target.base_url))
        {
            self.session.agent.set_context_length(tokens);
        }
        self.session
            .agent
            .set_limit_store(Box::new(history::CachedLimits::new(
                limits,
                target.base_url.clone(),
            )));
        if let Some(path) = &self.session.db_path {
            let db = SessionDb::open(path).context("opening the session store")?;
            let id = self.session.id().to_owned();
            self.session
                .agent
                .set_store(Box::new(store_for(db, &id, &model, &target)));
        }
        writeln!(
            err,
            "Model switched to {model} via {} for this session.",
            target.provider
        )?;
        self.session.runtime = target;
        Ok(())
    }

    /// `/compress [topic]`: summarise the middle of the conversation now.
    async fn compress(&mut self, topic: &str) -> Result<()> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
        let renderer = Renderer::new(Verbosity::Normal, self.session.emojis.clone());
        let log = self.session.log_settings.open(self.session.id());
        let printer = tokio::spawn(crate::spinner::print_events(renderer, rx, Some(log)));
        let before = self.session.agent.messages().len();
        let cancel = CancellationToken::new();
        // Ctrl+C cancels the summary call as it cancels a turn.
        let on_ctrl_c = cancel.clone();
        let watcher = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_ctrl_c.cancel();
            }
        });
        let focus = Some(topic).filter(|t| !t.trim().is_empty());
        let outcome = self.session.agent.compress(focus, &tx, &cancel).await;
        watcher.abort();
        drop(tx);
        let _ = printer.await;
        let mut err = std::io::stderr();
        match outcome {
            Ok(true) => writeln!(
                err,
                "Compressed: {before} → {} messages.",
                self.session.agent.messages().len()
            )?,
            Ok(false) => writeln!(err, "Nothing to compress yet.")?,
            Err(e) => writeln!(
                err,
                "error: {}",
                crate::chat::explain(&e, &self.session.runtime)
            )?,
        }
        Ok(())
    }

    fn status(&self) -> String {
        let agent = &self.session.agent;
        let chars: usize = agent.messages().iter().map(|m| m.text().len()).sum();
        format!(
            "Session   {}\nModel     {} via {} ({})\nMessages  {} · ~{} tokens of a {}-token window\nTokens    {} used · {} API calls · {}\nYOLO      {}\n",
            self.session.id(),
            agent.options().model,
            self.session.runtime.provider,
            self.session.runtime.base_url,
            agent.messages().len(),
            super::tally::thousands((chars / 4) as u64),
            super::tally::thousands(agent.context_length()),
            super::tally::thousands(self.tally.usage.total()),
            self.tally.api_calls,
            self.tally.cost_text(),
            if self.yolo { "on" } else { "off" },
        )
    }

    /// `/title <title>`.
    fn title(&self, title: &str) -> Result<()> {
        let mut err = std::io::stderr();
        let Some(path) = &self.session.db_path else {
            writeln!(err, "Session history is off: there is nothing to title.")?;
            return Ok(());
        };
        if title.trim().is_empty() {
            writeln!(err, "Usage: /title <title>")?;
            return Ok(());
        }
        let mut db = SessionDb::open(path).context("opening the session store")?;
        match db.set_title(self.session.id(), title) {
            Ok(_) => writeln!(err, "Session title set: {}", title.trim())?,
            Err(e) => writeln!(err, "error: {e}")?,
        }
        Ok(())
    }

    /// `/resume [id|title]`: without an argument, how to come back later; with
    /// one, continue that stored session here.
    fn resume(&mut self, key: &str) -> Result<()> {
        let mut err = std::io::stderr();
        if key.is_empty() {
            writeln!(
                err,
                "Resume this session later with:\n  hermes --resume {}",
                self.session.id()
            )?;
            return Ok(());
        }
        let Some(path) = &self.session.db_path else {
            writeln!(err, "Session history is off: there is nothing to resume.")?;
            return Ok(());
        };
        let mut db = SessionDb::open(path).context("opening the session store")?;
        let found = match history::find(&db, &ResumeRequest::Resume(key.to_owned())) {
            Ok(f) => f,
            Err(e) => {
                writeln!(err, "error: {e:#}")?;
                return Ok(());
            }
        };
        db.end_session(self.session.id(), "resumed_other")?;
        db.reopen_session(&found.id)?;
        let count = found.history.len();
        let model = self.session.agent.options().model.clone();
        self.session.agent.set_store(Box::new(store_for(
            db,
            &found.id,
            &model,
            &self.session.runtime,
        )));
        self.session.agent.replace_conversation(
            found.id.clone(),
            found.system_prompt,
            found.history,
        );
        self.tally = super::Tally::default();
        writeln!(err, "Resumed session {} ({count} messages).", found.id)?;
        Ok(())
    }

    fn tools(&self) -> String {
        let tools = self.session.agent.tools();
        let mut names: Vec<&str> = tools.names().collect();
        names.sort_unstable();
        let mut out = format!("{} tools:\n", names.len());
        for name in names {
            let emoji = self.session.emojis.get(name).map_or("⚡", String::as_str);
            out.push_str(&format!("  {emoji} {name}\n"));
        }
        out
    }

    /// `/personality [name]`: list, or set an overlay on the system prompt for
    /// this session. Changing the prompt costs the provider's prefix cache once,
    /// as it does in the reference.
    fn personality(&mut self, arg: &str) -> Result<()> {
        let mut err = std::io::stderr();
        let all = self.personalities();
        let name = arg.trim().to_ascii_lowercase();
        if name.is_empty() {
            writeln!(err, "Personalities:\n  {:<12} (no overlay)", "none")?;
            for (n, text) in &all {
                writeln!(err, "  {n:<12} {}", preview(text, 60))?;
            }
            writeln!(err, "Usage: /personality <name>")?;
            return Ok(());
        }
        let overlay = if matches!(name.as_str(), "none" | "default" | "neutral") {
            None
        } else if let Some((_, text)) = all.iter().find(|(n, _)| *n == name) {
            Some(text.clone())
        } else {
            let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
            writeln!(
                err,
                "Unknown personality: {name}\n  Available: none, {}",
                names.join(", ")
            )?;
            return Ok(());
        };
        let base = self.base_prompt();
        let prompt = match &overlay {
            Some(text) => format!("{base}\n\n{text}"),
            None => base,
        };
        let agent = &mut self.session.agent;
        let history: Vec<_> = agent
            .messages()
            .iter()
            .filter(|m| m.role != Role::System)
            .cloned()
            .collect();
        let id = agent.options().session_id.clone();
        agent.replace_conversation(id, Some(prompt), history);
        match overlay {
            Some(_) => writeln!(err, "Personality set to '{name}' for this session.")?,
            None => writeln!(err, "Personality cleared.")?,
        }
        Ok(())
    }

    /// The system prompt without any personality overlay.
    fn base_prompt(&mut self) -> String {
        if self.base_prompt.is_none() {
            self.base_prompt = self
                .session
                .agent
                .messages()
                .first()
                .filter(|m| m.role == Role::System)
                .map(|m| m.text().to_owned());
        }
        self.base_prompt.clone().unwrap_or_default()
    }

    fn personalities(&self) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = PERSONALITIES
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect();
        let Ok(setup) = Setup::load(self.run.ignore_user_config) else {
            return all;
        };
        if let Some(map) = setup
            .config
            .get("agent.personalities")
            .and_then(serde_json::Value::as_object)
        {
            for (name, value) in map {
                let text = value.as_str().or_else(|| {
                    value
                        .get("system_prompt")
                        .and_then(serde_json::Value::as_str)
                });
                if let Some(text) = text {
                    let name = name.to_ascii_lowercase();
                    match all.iter_mut().find(|(n, _)| *n == name) {
                        Some(slot) => slot.1 = text.to_owned(),
                        None => all.push((name, text.to_owned())),
                    }
                }
            }
        }
        all
    }
}

/// `PROVIDER:MODEL` picks both when PROVIDER is a provider the config knows (a
/// known provider that cannot be used, e.g. for a missing key, is an error to
/// show); anything else — `llama3:8b` included — is a model on the current provider.
fn resolve_target(setup: &Setup, current: &Runtime, arg: &str) -> Result<Runtime> {
    if let Some((provider, model)) = arg.split_once(':')
        && !provider.is_empty()
        && !model.is_empty()
    {
        match setup.runtime(Some(provider), Some(model)) {
            Ok(rt) => return Ok(rt),
            Err(crate::runtime::SetupError::UnknownProvider { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Runtime {
        model: Some(arg.to_owned()),
        ..current.clone()
    })
}

fn store_for(db: SessionDb, id: &str, model: &str, rt: &Runtime) -> DbStore {
    DbStore::new(
        db,
        id.to_owned(),
        model.to_owned(),
        rt.provider.clone(),
        rt.base_url.clone(),
    )
}
