//! Slash commands typed in a chat: `/stop`, `/new`, `/status`, `/usage`,
//! `/model`, `/approve`, `/deny`, `/sethome`, `/help` and the queueing
//! ones, with the reference's replies. While a turn runs only those that
//! make sense mid-turn are taken.

use hermes_protocol::{ApprovalChoice, Op};

use super::chat::{ChatInput, ChatWorker};
use super::platform::Incoming;

/// Commands, their arguments and what they do (for `/help`).
const HELP: &[(&str, &str, &str)] = &[
    ("new", "[title]", "Start a new session (alias: /reset)"),
    ("stop", "", "Stop the running task"),
    ("status", "", "Show the session's status"),
    ("usage", "", "Show token usage of this session"),
    ("model", "[name]", "Show or switch the model"),
    (
        "approve",
        "[session|always|all]",
        "Approve a pending dangerous command",
    ),
    ("deny", "[all] [reason]", "Deny a pending dangerous command"),
    (
        "queue",
        "<prompt>",
        "Queue a prompt for the next turn (alias: /q)",
    ),
    ("steer", "<prompt>", "Add guidance to the running task"),
    ("retry", "", "Send the last message again"),
    ("undo", "[n]", "Drop the last exchange"),
    ("compress", "[focus]", "Summarise the conversation so far"),
    ("title", "<title>", "Name this session"),
    (
        "yolo",
        "",
        "Toggle running dangerous commands without asking",
    ),
    (
        "sethome",
        "",
        "Make this chat the home channel (alias: /set-home)",
    ),
    ("help", "", "Show this list"),
];

/// Commands taken while a turn runs.
const MID_TURN: &[&str] = &[
    "status", "stop", "new", "reset", "queue", "q", "steer", "approve", "deny", "yolo", "help",
    "commands", "sethome", "set-home", "usage",
];

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whether `name` (without the slash, lower case) is a chat command.
pub(super) fn is_command(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    HELP.iter().any(|(n, _, _)| *n == name)
        || matches!(
            name.as_str(),
            "reset" | "q" | "set-home" | "commands" | "start"
        )
}

impl ChatWorker {
    /// Handles a `/command`: `None` when it is not one (the text goes to the
    /// agent), else whether the message is done (a queued prompt is not yet).
    pub(super) async fn command(&mut self, input: &ChatInput) -> Option<bool> {
        let text = input.message.text.trim();
        let (head, args) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let args = args.trim();
        // `/cmd@botname` in groups.
        let name = head
            .trim_start_matches('/')
            .split('@')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if !is_command(&name) {
            return None;
        }
        if self.turn.is_some() && !MID_TURN.contains(&name.as_str()) {
            self.say(&format!(
                "⏳ Agent is running — `/{name}` can't run mid-turn. Wait for the current response or `/stop` first."
            ))
            .await;
            return Some(true);
        }
        match name.as_str() {
            "stop" => self.stop().await,
            "new" | "reset" => self.new_session(args, &input.message).await,
            "status" => self.status().await,
            "usage" => self.usage().await,
            "model" => self.model(args, &input.message).await,
            "approve" => self.approve(args, &input.message.sender).await,
            "deny" => self.deny(args, &input.message.sender).await,
            "queue" | "q" => {
                if args.is_empty() {
                    self.say("Usage: /queue <prompt>").await;
                } else {
                    // The queued prompt answers this message's inbox entry.
                    let mut queued = input.message.clone();
                    queued.text = args.to_owned();
                    self.queue.push_back(ChatInput {
                        message: queued,
                        replayed: false,
                    });
                    let depth = self.queue.len();
                    self.say(&if depth > 1 {
                        format!("Queued for the next turn. ({depth} queued)")
                    } else {
                        "Queued for the next turn.".to_owned()
                    })
                    .await;
                    return Some(false);
                }
            }
            "steer" => self.steer(args).await,
            "retry" => {
                if self.session_op(&input.message, Op::Retry, None).await {
                    return Some(false);
                }
            }
            "undo" => {
                let turns = args.parse::<usize>().unwrap_or(1).max(1);
                self.session_op(&input.message, Op::Undo { turns }, Some("↩️ Undone."))
                    .await;
            }
            "compress" => {
                let focus = (!args.is_empty()).then(|| args.to_owned());
                self.session_op(
                    &input.message,
                    Op::Compress { focus },
                    Some("🗜️ Compressing the conversation..."),
                )
                .await;
            }
            "title" => {
                if args.is_empty() {
                    self.say("Usage: /title <title>").await;
                } else {
                    let op = Op::SetTitle {
                        title: args.to_owned(),
                    };
                    self.session_op(&input.message, op, Some(&format!("✏️ Title set: {args}")))
                        .await;
                }
            }
            "yolo" => {
                let on = !self.conv.as_ref().is_some_and(|c| c.info().yolo);
                let note = if on {
                    "⚠️ YOLO mode on: dangerous commands run without asking."
                } else {
                    "YOLO mode off: dangerous commands ask first."
                };
                self.session_op(&input.message, Op::SetYolo { on }, Some(note))
                    .await;
            }
            "sethome" | "set-home" => self.set_home().await,
            _ => self.help().await,
        }
        Some(true)
    }

    /// Submits `op` to the chat's session; returns whether it started a turn
    /// (a retry), which then answers `message`.
    async fn session_op(&mut self, message: &Incoming, op: Op, note: Option<&str>) -> bool {
        if let Err(e) = self.ensure_conversation(message).await {
            self.say(&format!("⚠️ {e}")).await;
            return false;
        }
        let retry = matches!(op, Op::Retry);
        let submitted = match &self.conv {
            Some(conv) => conv.submit(op),
            None => return false,
        };
        match submitted {
            Ok(submission) if retry => {
                self.watch_turn(submission, Some(&message.key));
                return true;
            }
            Ok(_) => {}
            Err(e) => {
                self.say(&format!("⚠️ {e}")).await;
                return false;
            }
        }
        if let Some(note) = note {
            self.say(note).await;
        }
        false
    }

    async fn stop(&mut self) {
        let dropped: Vec<String> = self.queue.drain(..).map(|q| q.message.key).collect();
        for key in &dropped {
            self.done(key);
        }
        match (&self.turn, &self.conv) {
            (Some(_), Some(conv)) => {
                let _ = conv.submit(Op::Interrupt);
                self.say("⚡ Stopped. You can continue this session.").await;
            }
            _ => self.say("No active task to stop.").await,
        }
    }

    async fn new_session(&mut self, title: &str, message: &Incoming) {
        let had = self.conv.is_some();
        if let Err(e) = self.ensure_conversation(message).await {
            self.say(&format!("⚠️ {e}")).await;
            return;
        }
        if let Some(conv) = &self.conv {
            if self.turn.is_some() {
                let _ = conv.submit(Op::Interrupt);
            }
            let _ = conv.submit(Op::NewSession);
            if !title.is_empty() {
                let _ = conv.submit(Op::SetTitle {
                    title: title.to_owned(),
                });
            }
        }
        let reply = if !title.is_empty() {
            format!("✨ New session started: {title}")
        } else if had {
            "✨ Session reset! Starting fresh.".to_owned()
        } else {
            "✨ New session started!".to_owned()
        };
        self.say(&reply).await;
    }

    async fn status(&mut self) {
        let platforms = self.hub.connected_platforms().join(", ");
        let Some(conv) = &self.conv else {
            self.say(&format!(
                "📊 **Hermes Gateway Status**\n\nNo session yet: send a message to start one.\n\n**Connected Platforms:** {platforms}"
            ))
            .await;
            return;
        };
        let info = conv.info();
        let pct = (info.approx_tokens * 100)
            .checked_div(info.context_length)
            .unwrap_or(0);
        let mut lines = vec![
            "📊 **Hermes Gateway Status**".to_owned(),
            String::new(),
            format!("**Session ID:** `{}`", info.session_id),
            format!("**Model:** `{}` ({})", info.model, info.provider),
            format!(
                "**Context:** {} / {} ({pct}%)",
                thousands(info.approx_tokens),
                thousands(info.context_length)
            ),
            format!(
                "**Agent Running:** {}",
                if self.turn.is_some() { "Yes ⚡" } else { "No" }
            ),
        ];
        if !self.queue.is_empty() {
            lines.push(format!("**Queued follow-ups:** {}", self.queue.len()));
        }
        lines.push(String::new());
        lines.push(format!("**Connected Platforms:** {platforms}"));
        self.say(&lines.join("\n")).await;
    }

    async fn usage(&mut self) {
        let Some(conv) = &self.conv else {
            self.say("No usage data available for this session.").await;
            return;
        };
        let info = conv.info();
        let row = self
            .hub
            .manager
            .services()
            .store()
            .and_then(|s| s.session(&info.session_id).ok().flatten());
        let Some(row) = row else {
            self.say(&format!(
                "📊 **Session Info**\nMessages: {}\nEstimated context: ~{} tokens\n_(Detailed usage available after the first agent response)_",
                info.messages, info.approx_tokens
            ))
            .await;
            return;
        };
        self.say(&format!(
            "📊 **Session Token Usage**\nModel: `{}`\nInput tokens: {}\nOutput tokens: {}\nTotal: {}\nAPI calls: {}",
            info.model,
            thousands(row.input_tokens.max(0) as u64),
            thousands(row.output_tokens.max(0) as u64),
            thousands((row.input_tokens + row.output_tokens).max(0) as u64),
            row.api_call_count
        ))
        .await;
    }

    async fn model(&mut self, args: &str, message: &Incoming) {
        if let Err(e) = self.ensure_conversation(message).await {
            self.say(&format!("⚠️ {e}")).await;
            return;
        }
        let Some(conv) = &mut self.conv else {
            return;
        };
        let target = args.split_whitespace().next().unwrap_or("");
        if target.is_empty() {
            let info = conv.info();
            self.say(&format!("Current: `{}` on {}", info.model, info.provider))
                .await;
            return;
        }
        let result = conv
            .request(
                Op::SwitchModel {
                    target: target.to_owned(),
                },
                |_| {},
            )
            .await;
        let reply = match result {
            Ok(hermes_protocol::Event::ModelChanged {
                model, provider, ..
            }) => format!("Model switched to `{model}`\nProvider: {provider}\n_(session only)_"),
            Ok(hermes_protocol::Event::Error { message }) => format!("⚠️ {message}"),
            Ok(_) => "Model unchanged.".to_owned(),
            Err(e) => format!("⚠️ {e}"),
        };
        self.say(&reply).await;
    }

    async fn approve(&mut self, args: &str, by: &super::platform::Sender) {
        if self.approvals.is_empty() {
            self.say("No pending command to approve.").await;
            return;
        }
        let words: Vec<String> = args
            .split_whitespace()
            .map(str::to_ascii_lowercase)
            .collect();
        let all = words.iter().any(|w| w == "all");
        let choice = if words
            .iter()
            .any(|w| matches!(w.as_str(), "session" | "ses"))
        {
            ApprovalChoice::Session
        } else if words
            .iter()
            .any(|w| matches!(w.as_str(), "always" | "permanent" | "permanently"))
        {
            ApprovalChoice::Always
        } else {
            ApprovalChoice::Once
        };
        let n = self.resolve_approvals(choice, all, by).await;
        if n == 0 {
            return;
        }
        let plural = if n > 1 {
            format!(" ({n} commands)")
        } else {
            String::new()
        };
        let reply = match choice {
            ApprovalChoice::Session => format!(
                "✅ Command approved{plural} (pattern approved for this session). The agent is resuming..."
            ),
            ApprovalChoice::Always => format!(
                "✅ Command approved{plural} (pattern approved permanently). The agent is resuming..."
            ),
            _ => format!("✅ Command approved{plural}. The agent is resuming..."),
        };
        self.say(&reply).await;
    }

    async fn deny(&mut self, args: &str, by: &super::platform::Sender) {
        if self.approvals.is_empty() {
            self.say("No pending command to deny.").await;
            return;
        }
        let (all, reason) = match args.split_once(char::is_whitespace) {
            _ if args.eq_ignore_ascii_case("all") => (true, ""),
            Some((first, rest)) if first.eq_ignore_ascii_case("all") => (true, rest.trim()),
            _ => (false, args),
        };
        let n = self.resolve_approvals(ApprovalChoice::Deny, all, by).await;
        if n == 0 {
            return;
        }
        if !reason.is_empty()
            && let Some(conv) = &self.conv
        {
            let reason: String = reason.chars().take(280).collect();
            let _ = conv.submit(Op::Steer {
                text: format!("The user denied the command: {reason}"),
            });
            self.say(&format!(
                "❌ Command denied. Reason relayed to the agent: \"{reason}\""
            ))
            .await;
            return;
        }
        self.say(&if n > 1 {
            format!("❌ Commands denied ({n} commands).")
        } else {
            "❌ Command denied.".to_owned()
        })
        .await;
    }

    async fn steer(&mut self, args: &str) {
        if args.is_empty() {
            self.say("Usage: /steer <prompt>").await;
            return;
        }
        match (&self.turn, &self.conv) {
            (Some(_), Some(conv)) => {
                let _ = conv.submit(Op::Steer {
                    text: args.to_owned(),
                });
                let head: String = args.chars().take(60).collect();
                self.say(&format!(
                    "⏩ Steer queued — arrives after the next tool call: '{head}...'"
                ))
                .await;
            }
            _ => {
                self.say("No active agent — /steer queued for the next turn.")
                    .await
            }
        }
    }

    async fn set_home(&mut self) {
        let var = format!("{}_HOME_CHANNEL", self.adapter.name().to_ascii_uppercase());
        let env_path = self.hub.home.join(".env");
        let saved =
            hermes_state::env_file::set_var(&env_path, &var, Some(&self.chat.id)).and_then(|_| {
                hermes_state::env_file::set_var(
                    &env_path,
                    &format!("{var}_THREAD_ID"),
                    Some(self.chat.thread_id.as_deref().unwrap_or("")),
                )
            });
        let name = self
            .chat
            .name
            .clone()
            .unwrap_or_else(|| self.chat.id.clone());
        match saved {
            Ok(_) => {
                self.hub.set_home(self.adapter.name(), &self.chat);
                self.say(&format!(
                    "✅ Home channel set to **{name}** (ID: {}).\nCron jobs and cross-platform messages will be delivered here.",
                    self.chat.id
                ))
                .await;
            }
            Err(e) => self.say(&format!("Failed to save home channel: {e}")).await,
        }
    }

    async fn help(&mut self) {
        let mut text = String::from("📖 **Hermes Commands**\n");
        for (name, args, about) in HELP {
            let usage = if args.is_empty() {
                format!("/{name}")
            } else {
                format!("/{name} {args}")
            };
            text.push_str(&format!("\n`{usage}` -- {about}"));
        }
        self.say(&text).await;
    }
}
