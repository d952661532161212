//! Slash commands of the interactive REPL: names and help follow the reference's
//! command registry so muscle memory carries over.

/// One slash command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandDef {
    /// Canonical name, without the slash.
    pub name: &'static str,
    /// Other names that run the same command.
    pub aliases: &'static [&'static str],
    /// Argument hint shown by /help.
    pub args: &'static str,
    /// One line for /help.
    pub help: &'static str,
}

/// Every command the REPL understands, in /help order.
pub const COMMANDS: &[CommandDef] = &[
    CommandDef {
        name: "new",
        aliases: &["reset"],
        args: "",
        help: "Start a new session (fresh session id and history)",
    },
    CommandDef {
        name: "retry",
        aliases: &[],
        args: "",
        help: "Retry the last message (resend it to the agent)",
    },
    CommandDef {
        name: "undo",
        aliases: &[],
        args: "[N]",
        help: "Back up N user turns (default 1)",
    },
    CommandDef {
        name: "title",
        aliases: &[],
        args: "<title>",
        help: "Set a title for the current session",
    },
    CommandDef {
        name: "reload-mcp",
        aliases: &["reload_mcp"],
        args: "",
        help: "Reload MCP servers from config.yaml",
    },
    CommandDef {
        name: "rollback",
        aliases: &[],
        args: "[N | diff N | N FILE]",
        help: "List or restore filesystem checkpoints (needs --checkpoints or checkpoints.enabled)",
    },
    CommandDef {
        name: "compress",
        aliases: &["compact"],
        args: "[topic]",
        help: "Compress the conversation context now",
    },
    CommandDef {
        name: "queue",
        aliases: &["q"],
        args: "<prompt>",
        help: "Send a prompt once the running turn finishes (typing plain text mid-turn does the same)",
    },
    CommandDef {
        name: "steer",
        aliases: &[],
        args: "<prompt>",
        help: "Tell the running turn something; it reaches the model with the next tool result",
    },
    CommandDef {
        name: "stop",
        aliases: &[],
        args: "",
        help: "Stop the running turn (Ctrl+C does the same)",
    },
    CommandDef {
        name: "status",
        aliases: &[],
        args: "",
        help: "Show session, model, token and context info",
    },
    CommandDef {
        name: "resume",
        aliases: &[],
        args: "[ID|TITLE|N]",
        help: "Switch to a past session by id, title or /sessions number (alone: how to resume this one later)",
    },
    CommandDef {
        name: "sessions",
        aliases: &[],
        args: "[ID|TITLE]",
        help: "List recent sessions to resume (with a session: resume it)",
    },
    CommandDef {
        name: "model",
        aliases: &[],
        args: "[provider:model]",
        help: "Show or switch the model for this session",
    },
    CommandDef {
        name: "personality",
        aliases: &[],
        args: "[name]",
        help: "Set a predefined personality",
    },
    CommandDef {
        name: "yolo",
        aliases: &[],
        args: "",
        help: "Toggle YOLO mode (skip dangerous-command approvals)",
    },
    CommandDef {
        name: "tools",
        aliases: &[],
        args: "",
        help: "List the tools this session offers",
    },
    CommandDef {
        name: "skills",
        aliases: &[],
        args: "",
        help: "List installed skills",
    },
    CommandDef {
        name: "usage",
        aliases: &[],
        args: "",
        help: "Show token usage and estimated cost",
    },
    CommandDef {
        name: "help",
        aliases: &[],
        args: "",
        help: "Show available commands",
    },
    CommandDef {
        name: "quit",
        aliases: &["exit"],
        args: "",
        help: "Exit the CLI",
    },
];

/// A parsed line that started with `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// A known command and its argument text (trimmed, possibly empty).
    Known(&'static CommandDef, String),
    /// Not a command; the closest name, when one is close enough.
    Unknown {
        /// What was typed (without the slash).
        typed: String,
        /// A suggestion, without the slash.
        suggestion: Option<&'static str>,
    },
}

/// Looks a command line up. `line` starts with `/`.
pub fn parse(line: &str) -> Parsed {
    let body = line.trim().trim_start_matches('/');
    let (word, rest) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
    let word_lc = word.to_ascii_lowercase();
    for def in COMMANDS {
        if def.name == word_lc || def.aliases.contains(&word_lc.as_str()) {
            return Parsed::Known(def, rest.trim().to_owned());
        }
    }
    Parsed::Unknown {
        suggestion: suggest(&word_lc),
        typed: word.to_owned(),
    }
}

/// The closest command name, if it is plausibly a typo.
fn suggest(word: &str) -> Option<&'static str> {
    if word.is_empty() {
        return None;
    }
    let names = COMMANDS
        .iter()
        .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()));
    let (best, score) = names
        .map(|n| (n, strsim::jaro_winkler(word, n)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    // A prefix is always a good guess ("/mod" → "/model").
    let canonical = COMMANDS
        .iter()
        .find(|d| d.name == best || d.aliases.contains(&best))
        .map_or(best, |d| d.name);
    if score >= 0.75 {
        return Some(canonical);
    }
    COMMANDS
        .iter()
        .find(|d| d.name.starts_with(word))
        .map(|d| d.name)
}

/// Command names (with the slash) starting with `prefix`, for completion.
pub fn complete(prefix: &str) -> Vec<String> {
    let word = prefix.trim_start_matches('/').to_ascii_lowercase();
    COMMANDS
        .iter()
        .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
        .filter(|n| n.starts_with(&word))
        .map(|n| format!("/{n}"))
        .collect()
}

/// The /help text.
pub fn help() -> String {
    let mut out = String::from("Commands:\n");
    for def in COMMANDS {
        let usage = if def.args.is_empty() {
            format!("/{}", def.name)
        } else {
            format!("/{} {}", def.name, def.args)
        };
        let aliases = if def.aliases.is_empty() {
            String::new()
        } else {
            format!(
                " (also {})",
                def.aliases
                    .iter()
                    .map(|a| format!("/{a}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        out.push_str(&format!("  {usage:<26} {}{aliases}\n", def.help));
    }
    out.push_str(
        "Keys: Alt+Enter or a trailing \\ for a new line · Tab completes /commands and @files · \
         Ctrl+C interrupts · Ctrl+D exits\n",
    );
    out
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
