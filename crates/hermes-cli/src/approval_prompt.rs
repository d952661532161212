//! Asking the user at the terminal whether a dangerous command may run (the
//! session's `ApprovalRequested` events).

use std::io::{BufRead, Write};

use hermes_protocol::ApprovalChoice;

/// Asks on stderr and reads one line from stdin: `[o]nce / [s]ession / [a]lways / [d]eny`.
/// Blocks; run it off the async runtime.
pub(crate) fn ask(command: &str, reason: &str) -> ApprovalChoice {
    // Keeps the type-ahead reader from eating the answer.
    let _input = crate::terminal_input::InputClaim::take();
    let mut err = std::io::stderr();
    let _ = writeln!(err, "\n⚠️  Dangerous command: {reason}\n    {command}\n");
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
