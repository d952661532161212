//! What each slash command does: most become an op for the session, and the
//! event that answers it is shown.

use std::io::Write;

use anyhow::Result;
use hermes_protocol::{Event, Op};

use super::{Next, Repl, commands};
use crate::driver;
use crate::render::{Verbosity, preview};

impl Repl {
    /// Runs the command `name` (canonical) with `arg`.
    pub(super) async fn dispatch(&mut self, name: &str, arg: &str) -> Result<Next> {
        let mut err = std::io::stderr();
        match name {
            "quit" => return Ok(Next::Quit),
            "help" => write!(err, "{}", commands::help())?,
            "new" => self.new_session().await?,
            "undo" => {
                let n = arg.parse::<usize>().unwrap_or(1).max(1);
                self.undo(n).await?;
            }
            "retry" => self.send_op(Op::Retry).await?,
            "model" => self.model(arg).await?,
            "compress" => self.compress(arg).await?,
            "usage" => write!(
                err,
                "{}",
                self.tally.report(&self.session.conv.info().model)
            )?,
            "status" => write!(err, "{}", self.status())?,
            "title" => self.title(arg).await?,
            "rollback" => self.rollback(arg).await?,
            "resume" => self.resume(arg).await?,
            "sessions" => self.sessions(arg).await?,
            "yolo" => self.toggle_yolo().await?,
            "tools" => write!(err, "{}", self.tools())?,
            // The answer (a status line or an error) is shown as it arrives.
            "reload-mcp" => {
                self.ask(Op::ReloadMcp).await?;
            }
            "skills" => write!(
                err,
                "{}",
                crate::skills_cmd::listing(self.session.setup.home.root())
            )?,
            "personality" => self.personality(arg).await?,
            "queue" | "steer" if arg.is_empty() => writeln!(err, "Usage: /{name} <prompt>")?,
            "queue" => return Ok(Next::Send(arg.to_owned())),
            "steer" => {
                writeln!(err, "No turn is running; sending it as a message.")?;
                return Ok(Next::Send(arg.to_owned()));
            }
            "stop" => match self.ask(Op::StopProcesses).await? {
                Event::Ack | Event::Error { .. } => {}
                other => unexpected(&other)?,
            },
            other => writeln!(err, "/{other} is not available here yet.")?,
        }
        Ok(Next::Continue)
    }

    /// Sends a command op and returns the event that answers it.
    pub(super) async fn ask(&mut self, op: Op) -> Result<Event> {
        let display = self.session.display(Verbosity::Normal, false);
        let outcome = driver::run(&mut self.session.conv, op, &display, None, &mut |_| {
            Ok(None)
        })
        .await?;
        Ok(outcome.last)
    }

    /// `/new`: end this session in the store and start an empty one.
    async fn new_session(&mut self) -> Result<()> {
        let mut err = std::io::stderr();
        match self.ask(Op::NewSession).await? {
            Event::SessionChanged { session_id, .. } => {
                self.tally = super::Tally::default();
                writeln!(err, "New session started: {session_id}")?;
            }
            Event::Error { .. } => {}
            other => unexpected(&other)?,
        }
        Ok(())
    }

    /// `/undo [N]`: drop the last N user turns; their text comes back in the prompt.
    async fn undo(&mut self, n: usize) -> Result<()> {
        let mut err = std::io::stderr();
        match self.ask(Op::Undo { turns: n }).await? {
            Event::Undone {
                text: Some(text),
                removed,
            } => {
                writeln!(
                    err,
                    "Undid {} message{}: \"{}\"",
                    removed,
                    if removed == 1 { "" } else { "s" },
                    preview(&text, 60)
                )?;
                self.prefill = Some(text);
            }
            Event::Undone { text: None, .. } => writeln!(err, "No messages to undo.")?,
            Event::Error { .. } => {}
            other => unexpected(&other)?,
        }
        Ok(())
    }

    /// `/model [provider:model]`: show, or switch for the rest of the session.
    async fn model(&mut self, arg: &str) -> Result<()> {
        let mut err = std::io::stderr();
        let info = self.session.conv.info();
        if arg.is_empty() {
            writeln!(
                err,
                "Model: {} via {} ({})\nSwitch with /model MODEL or /model PROVIDER:MODEL",
                info.model, info.provider, info.base_url
            )?;
            return Ok(());
        }
        let op = Op::SwitchModel {
            target: arg.to_owned(),
        };
        match self.ask(op).await? {
            Event::ModelChanged {
                model, provider, ..
            } => writeln!(
                err,
                "Model switched to {model} via {provider} for this session."
            )?,
            Event::Error { .. } => {}
            other => unexpected(&other)?,
        }
        Ok(())
    }

    /// `/compress [topic]`: summarise the middle of the conversation now.
    async fn compress(&mut self, topic: &str) -> Result<()> {
        let mut err = std::io::stderr();
        // The system prompt is not part of the conversation.
        let count = self.session.conv.info().messages.saturating_sub(1);
        if count < 4 {
            writeln!(
                err,
                "Not enough conversation to compress (need at least 4 messages)."
            )?;
            return Ok(());
        }
        let op = Op::Compress {
            focus: Some(topic.to_owned()).filter(|t| !t.trim().is_empty()),
        };
        match self.ask(op).await? {
            Event::Compressed { before, after } if before != after => {
                writeln!(err, "Compressed: {before} → {after} messages.")?;
            }
            Event::Compressed { before, .. } => {
                writeln!(err, "No changes from compression: {before} messages.")?;
            }
            Event::Error { .. } => {}
            other => unexpected(&other)?,
        }
        Ok(())
    }

    fn status(&self) -> String {
        let info = self.session.conv.info();
        format!(
            "Session   {}\nModel     {} via {} ({})\nMessages  {} · ~{} tokens of a {}-token window\nTokens    {} used · {} API calls · {}\nYOLO      {}\n",
            info.session_id,
            info.model,
            info.provider,
            info.base_url,
            info.messages,
            super::tally::thousands(info.approx_tokens),
            super::tally::thousands(info.context_length),
            super::tally::thousands(self.tally.usage.total()),
            self.tally.api_calls,
            self.tally.cost_text(),
            if info.yolo { "on" } else { "off" },
        ) + &background_lines(&info.background)
    }

    /// `/title <title>`.
    async fn title(&mut self, title: &str) -> Result<()> {
        let mut err = std::io::stderr();
        if !self.session.conv.info().recorded {
            writeln!(err, "Session history is off: there is nothing to title.")?;
            return Ok(());
        }
        if title.trim().is_empty() {
            writeln!(err, "Usage: /title <title>")?;
            return Ok(());
        }
        let op = Op::SetTitle {
            title: title.to_owned(),
        };
        match self.ask(op).await? {
            Event::Ack => writeln!(err, "Session title set: {}", title.trim())?,
            Event::Error { .. } => {}
            other => unexpected(&other)?,
        }
        Ok(())
    }

    /// `/resume [id|title]`: without an argument, how to come back later; with
    /// one, continue that stored session here.
    pub(super) async fn resume(&mut self, key: &str) -> Result<()> {
        let mut err = std::io::stderr();
        if key.is_empty() {
            writeln!(
                err,
                "Resume this session later with:\n  hermes --resume {}",
                self.session.id()
            )?;
            return Ok(());
        }
        if !self.session.conv.info().recorded {
            writeln!(err, "Session history is off: there is nothing to resume.")?;
            return Ok(());
        }
        let op = Op::Resume {
            key: self.listed_session(key).unwrap_or_else(|| key.to_owned()),
        };
        match self.ask(op).await? {
            Event::SessionChanged {
                session_id,
                messages,
                ..
            } => {
                self.tally = super::Tally::default();
                writeln!(err, "Resumed session {session_id} ({messages} messages).")?;
            }
            Event::Error { .. } => {}
            other => unexpected(&other)?,
        }
        Ok(())
    }

    /// `/yolo`: dangerous commands run without asking, or ask again.
    async fn toggle_yolo(&mut self) -> Result<()> {
        let on = !self.session.conv.info().yolo;
        let mut err = std::io::stderr();
        match self.ask(Op::SetYolo { on }).await? {
            Event::Ack if on => writeln!(
                err,
                "⚡ YOLO mode ON: dangerous commands run without asking."
            )?,
            Event::Ack => writeln!(err, "YOLO mode OFF: dangerous commands ask first.")?,
            Event::Error { .. } => {}
            other => unexpected(&other)?,
        }
        Ok(())
    }

    fn tools(&self) -> String {
        let tools = self.session.conv.info().tools;
        let mut out = format!("{} tools:\n", tools.len());
        for tool in tools {
            out.push_str(&format!("  {} {}\n", tool.emoji, tool.name));
        }
        out
    }

    /// `/personality [name]`: list, or set an overlay on the system prompt for
    /// this session. Changing the prompt costs the provider's prefix cache once,
    /// as it does in the reference.
    async fn personality(&mut self, arg: &str) -> Result<()> {
        let mut err = std::io::stderr();
        let all = hermes_session::personality::personalities(&self.session.setup.config);
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
        let set = overlay.is_some();
        match self.ask(Op::SetPromptOverlay { overlay }).await? {
            Event::Ack if set => writeln!(err, "Personality set to '{name}' for this session.")?,
            Event::Ack => writeln!(err, "Personality cleared.")?,
            Event::Error { .. } => {}
            other => unexpected(&other)?,
        }
        Ok(())
    }
}

/// An answer no command expects (a bug, not a user error).
fn unexpected(event: &Event) -> Result<()> {
    anyhow::bail!("the session answered unexpectedly: {event:?}")
}

/// `/status`'s lines for the running background processes.
fn background_lines(running: &[hermes_session::BackgroundInfo]) -> String {
    if running.is_empty() {
        return String::new();
    }
    let mut text = format!(
        "Processes {} running in the background (/stop ends them)\n",
        running.len()
    );
    for p in running {
        let secs = p.uptime_secs;
        let uptime = match secs {
            s if s < 60 => format!("{s}s"),
            s if s < 3600 => format!("{}m {}s", s / 60, s % 60),
            s => format!("{}h {}m", s / 3600, s / 60 % 60),
        };
        let command: String = p.command.chars().take(80).collect();
        text.push_str(&format!("          {} · {uptime} · {command}\n", p.id));
    }
    text
}
