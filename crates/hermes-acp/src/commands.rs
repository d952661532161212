//! The slash commands an editor offers (`available_commands_update`) and
//! their replies. Unknown `/words` go to the model as ordinary text.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};
use hermes_protocol::{Event, Op, Role};

use crate::sessions::{Acp, AcpSession};

/// Name, description, input hint.
const COMMANDS: [(&str, &str, Option<&str>); 9] = [
    ("help", "List available commands", None),
    (
        "model",
        "Show current model and provider, or switch models",
        Some("model name to switch to"),
    ),
    ("tools", "List available tools with descriptions", None),
    ("context", "Show conversation message counts by role", None),
    ("reset", "Clear conversation history", None),
    ("compact", "Compress conversation context", None),
    (
        "steer",
        "Inject guidance into the currently running agent turn",
        Some("guidance for the active turn"),
    ),
    (
        "queue",
        "Queue a prompt to run after the current turn finishes",
        Some("prompt to run next"),
    ),
    ("version", "Show Hermes version", None),
];

/// The commands, for `available_commands_update`.
pub fn available() -> Vec<AvailableCommand> {
    COMMANDS
        .iter()
        .map(|(name, desc, hint)| {
            let mut c = AvailableCommand::new(*name, *desc);
            if let Some(hint) = hint {
                c = c.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(*hint),
                ));
            }
            c
        })
        .collect()
}

impl Acp {
    /// The reply to a slash command, or `None` when `text` is not one.
    pub(crate) async fn command(
        &self,
        session: &Arc<AcpSession>,
        _id: &str,
        text: &str,
        _cx: &ConnectionTo<Client>,
    ) -> Option<String> {
        let rest = text.trim().strip_prefix('/')?;
        let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let name = name.to_ascii_lowercase();
        if !COMMANDS.iter().any(|c| c.0 == name) {
            return None;
        }
        let args = args.trim();
        let running = session.running.load(Ordering::SeqCst);
        Some(match name.as_str() {
            "help" => {
                let mut out = String::from("Available commands:\n");
                for (n, d, _) in COMMANDS {
                    out.push_str(&format!("  /{n:<10}  {d}\n"));
                }
                out.push_str("\nUnrecognized /commands are sent to the model as normal messages.");
                out
            }
            "version" => format!("Hermes Agent v{}", env!("CARGO_PKG_VERSION")),
            "steer" if args.is_empty() => "Usage: /steer <guidance>".into(),
            "steer" if running => {
                let _ = session.submitter.submit(Op::Steer {
                    text: args.to_owned(),
                });
                format!("⏩ Steer queued for the active turn: {args}")
            }
            "steer" | "queue" => {
                if args.is_empty() {
                    return Some("Usage: /queue <prompt>".into());
                }
                let mut queued = session
                    .queued
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                queued.push(args.to_owned());
                if running {
                    format!("Queued for the next turn. ({} queued)", queued.len())
                } else {
                    format!(
                        "No active turn — queued for your next prompt. ({} queued)",
                        queued.len()
                    )
                }
            }
            _ if running => "A turn is running; try again when it ends.".into(),
            "model" if args.is_empty() => {
                let info = session.conv.lock().await.info();
                format!("Current model: {}\nProvider: {}", info.model, info.provider)
            }
            "model" => {
                let mut conv = session.conv.lock().await;
                let op = Op::SwitchModel {
                    target: args.to_owned(),
                };
                match conv.request(op, |_| {}).await {
                    Ok(Event::ModelChanged {
                        model, provider, ..
                    }) => format!("Model switched to: {model}\nProvider: {provider}"),
                    Ok(Event::Error { message }) => format!("Could not switch models: {message}"),
                    Ok(_) => "Could not switch models.".into(),
                    Err(e) => format!("Could not switch models: {e}"),
                }
            }
            "tools" => {
                let info = session.conv.lock().await.info();
                let mut out = format!("Available tools ({}):\n", info.tools.len());
                for t in &info.tools {
                    out.push_str(&format!("  {}\n", t.name));
                }
                out
            }
            "context" => {
                let conv = session.conv.lock().await;
                let info = conv.info();
                let store = self.manager.services().store();
                let mut counts = [0usize; 3];
                if let Some(store) = store
                    && let Ok(messages) = store.conversation(&info.session_id)
                {
                    for m in messages {
                        match m.role {
                            Role::User => counts[0] += 1,
                            Role::Assistant => counts[1] += 1,
                            Role::Tool => counts[2] += 1,
                            _ => {}
                        }
                    }
                }
                let pct = (info.approx_tokens * 100)
                    .checked_div(info.context_length)
                    .unwrap_or(0);
                format!(
                    "Conversation: {} messages\n  user: {}\n  assistant: {}\n  tool: {}\nModel: {} ({})\nContext usage: ~{} / {} tokens ({pct}%)",
                    counts.iter().sum::<usize>(),
                    counts[0],
                    counts[1],
                    counts[2],
                    info.model,
                    info.provider,
                    info.approx_tokens,
                    info.context_length
                )
            }
            "reset" => {
                let mut conv = session.conv.lock().await;
                match conv.request(Op::NewSession, |_| {}).await {
                    Ok(Event::Error { message }) => format!("Could not reset: {message}"),
                    Err(e) => format!("Could not reset: {e}"),
                    Ok(_) => "Conversation history cleared.".into(),
                }
            }
            "compact" => {
                let mut conv = session.conv.lock().await;
                let before = conv.info().approx_tokens;
                match conv.request(Op::Compress { focus: None }, |_| {}).await {
                    Ok(Event::Compressed {
                        before: b,
                        after: a,
                    }) if a < b => format!(
                        "Context compressed: {b} -> {a} messages\n~{before} -> ~{} tokens",
                        conv.info().approx_tokens
                    ),
                    Ok(Event::Compressed { .. }) => "Nothing to compress yet.".into(),
                    Ok(Event::Error { message }) => format!("Could not compress: {message}"),
                    Ok(_) => "Nothing to compress yet.".into(),
                    Err(e) => format!("Could not compress: {e}"),
                }
            }
            _ => return None,
        })
    }
}
