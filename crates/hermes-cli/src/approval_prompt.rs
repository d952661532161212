//! The CLI side of dangerous-command approval: building the session's gate
//! from flags and config, and a plain stdin prompt for interactive sessions.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use hermes_state::{Config, HermesHome};
use hermes_tools::approval::{
    ApprovalChoice, ApprovalGate, ApprovalMode, ApprovalRequest, Approver, DEFAULT_TIMEOUT,
    Presence,
};

/// Builds the approval gate: `--yolo` or `approvals.mode: off` skip approval for
/// dangerous commands; `command_allowlist` entries are pre-approved and
/// `approvals.deny` globs always refused; a person is
/// asked only when `interactive` is set and stdin is a terminal, otherwise
/// dangerous commands are refused at once.
pub(crate) fn build_gate(
    config: &Config,
    home: &HermesHome,
    yolo: bool,
    interactive: bool,
) -> Arc<ApprovalGate> {
    let mode = if yolo {
        ApprovalMode::Off
    } else {
        ApprovalMode::from_config(config.get("approvals.mode"))
    };
    let strings = |key: &str| -> Vec<String> {
        config
            .get(key)
            .and_then(|v| v.as_array())
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let allowlist = strings("command_allowlist");
    let deny = strings("approvals.deny");
    let timeout = config
        .get("approvals.timeout")
        .and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        })
        .filter(|secs| *secs > 0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let presence = if interactive && std::io::stdin().is_terminal() {
        Presence::Interactive(Arc::new(StdinApprover))
    } else {
        Presence::NonInteractive
    };
    Arc::new(
        ApprovalGate::new(mode, presence)
            .with_allowlist(allowlist, Some(home.config_file()))
            .with_deny(deny)
            .with_timeout(timeout),
    )
}

/// Lets the session ask a person (when stdin is a terminal): the REPL calls this
/// after building its session; mode and allowlists carry over.
#[allow(dead_code)]
pub(crate) fn make_interactive(agent: &mut hermes_agent::Agent) {
    if std::io::stdin().is_terminal() && !agent.approvals().is_interactive() {
        let gate = agent
            .approvals()
            .with_presence(Presence::Interactive(Arc::new(StdinApprover)));
        agent.set_approvals(Arc::new(gate));
    }
}

/// Asks on stderr and reads one line from stdin: `[o]nce / [s]ession / [a]lways / [d]eny`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StdinApprover;

impl Approver for StdinApprover {
    fn ask<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ApprovalChoice> + Send + 'a>> {
        let request = request.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || prompt(&request))
                .await
                .unwrap_or(ApprovalChoice::Deny)
        })
    }
}

fn prompt(request: &ApprovalRequest) -> ApprovalChoice {
    // Keeps the type-ahead reader from eating the answer.
    let _input = crate::terminal_input::InputClaim::take();
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "\n⚠️  Dangerous command: {}\n    {}\n",
        request.reason, request.command
    );
    let _ = write!(
        err,
        "Allow? [o]nce / [s]ession / [a]lways / [d]eny (default deny): "
    );
    let _ = err.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => ApprovalChoice::Deny,
        Ok(_) => parse_choice(&line),
    }
}

/// Reads an answer; anything unrecognised denies, so a stray Enter never approves.
pub(crate) fn parse_choice(answer: &str) -> ApprovalChoice {
    match answer.trim().to_ascii_lowercase().as_str() {
        "o" | "once" | "y" | "yes" => ApprovalChoice::Once,
        "s" | "session" => ApprovalChoice::Session,
        "a" | "always" => ApprovalChoice::Always,
        _ => ApprovalChoice::Deny,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_and_default_to_deny() {
        assert_eq!(parse_choice("o\n"), ApprovalChoice::Once);
        assert_eq!(parse_choice(" Session "), ApprovalChoice::Session);
        assert_eq!(parse_choice("a"), ApprovalChoice::Always);
        assert_eq!(parse_choice(""), ApprovalChoice::Deny);
        assert_eq!(parse_choice("maybe"), ApprovalChoice::Deny);
    }
}
