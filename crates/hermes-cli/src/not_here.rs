//! The reference's commands and flags this binary does not have yet: named,
//! with what to do meanwhile, instead of a bare parse error (the README's
//! "Reference commands not here yet" lists the same).

/// Command, what it does in the reference, and what to do here meanwhile.
const MISSING: &[(&str, &str, &str)] = &[
    (
        "update",
        "update a pip install",
        "rebuild instead: git pull && cargo install --locked --path crates/hermes-cli",
    ),
    (
        "uninstall",
        "uninstall Hermes Agent",
        "delete the binary (cargo uninstall hermes-cli if cargo installed it)",
    ),
    (
        "postinstall",
        "fetch a pip install's other dependencies",
        "scripts/prereqs.sh and hermes doctor cover this build",
    ),
    (
        "backup",
        "zip the Hermes home",
        "copy $HERMES_HOME meanwhile",
    ),
    (
        "import",
        "restore a backup zip",
        "copy $HERMES_HOME meanwhile",
    ),
    (
        "dump",
        "a set-up summary for support",
        "hermes status and hermes doctor show it",
    ),
    (
        "debug",
        "upload logs for support",
        "the logs are in $HERMES_HOME/logs (hermes logs)",
    ),
    (
        "login",
        "provider login",
        "use hermes auth, hermes model or hermes setup",
    ),
    (
        "logout",
        "clear a provider's credentials",
        "use hermes auth remove",
    ),
    ("memory", "configure an external memory provider", "not yet"),
    (
        "migrate",
        "rewrite config.yaml's retired settings",
        "not yet",
    ),
    ("secrets", "external secret sources", "not yet"),
    ("bw", "external secret sources", "not yet"),
    ("security", "a supply-chain audit", "not yet"),
    (
        "fallback",
        "manage fallback_providers",
        "edit fallback_providers in config.yaml",
    ),
    ("moa", "Mixture-of-Agents slots", "not yet"),
    ("curator", "background skill maintenance", "not yet"),
    (
        "journey",
        "a timeline of learned skills and memories",
        "not yet",
    ),
    (
        "learning",
        "a timeline of learned skills and memories",
        "not yet",
    ),
    (
        "memory-graph",
        "a timeline of learned skills and memories",
        "not yet",
    ),
    ("pets", "animated pets", "not yet"),
    ("kanban", "a collaboration board", "not yet"),
    ("bundles", "skill bundles", "not yet"),
    ("claw", "OpenClaw migration", "not yet"),
    ("project", "multi-folder workspaces", "not yet"),
    ("proxy", "a local proxy to OAuth providers", "not yet"),
    ("portal", "Nous Portal set-up", "not yet"),
    (
        "prompt-size",
        "the system prompt's size breakdown",
        "not yet",
    ),
    ("lsp", "semantic diagnostics after edits", "not yet"),
    ("console", "a Hermes command REPL", "not yet"),
    ("gui", "the desktop app", "not yet"),
    ("desktop", "the desktop app", "not yet"),
    (
        "serve",
        "the desktop app's back-end server",
        "hermes gateway run serves the API",
    ),
    ("computer-use", "the Computer Use back-end", "not yet"),
    (
        "whatsapp",
        "WhatsApp set-up",
        "not yet (no WhatsApp adapter)",
    ),
    (
        "whatsapp-cloud",
        "WhatsApp Business Cloud set-up",
        "not yet (no WhatsApp adapter)",
    ),
    (
        "slack",
        "Slack helpers (app manifest)",
        "Slack itself works through hermes gateway run",
    ),
];

/// What to say when `args` (after the program name) ask for something the
/// reference has and this binary does not; `None` for anything else.
pub(crate) fn explain(args: &[String]) -> Option<String> {
    let mut words = args.iter().map(String::as_str);
    while let Some(word) = words.next() {
        if crate::profile::VALUE_FLAGS.contains(&word) {
            words.next();
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        return MISSING
            .iter()
            .find(|(name, _, _)| *name == word)
            .map(|(name, what, meanwhile)| message(name, what, meanwhile));
    }
    None
}

fn message(name: &str, what: &str, meanwhile: &str) -> String {
    format!(
        "hermes {name}: not in hermes-rs yet (in the reference: {what}); {meanwhile}.\n\
         See \"Reference commands not here yet\" in the README for every such command; \
         `hermes --help` lists what this build has."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn missing_commands_are_named() {
        let said = explain(&words("backup --days 7")).unwrap();
        assert!(said.starts_with("hermes backup: not in hermes-rs yet"));
        assert!(
            explain(&words("-m gpt-5 kanban"))
                .unwrap()
                .contains("kanban")
        );
        assert_eq!(explain(&words("profile list")), None, "built now");
    }

    #[test]
    fn real_commands_and_flag_values_are_left_alone() {
        assert_eq!(explain(&words("chat -q hi")), None);
        assert_eq!(explain(&words("-m kanban chat")), None);
        assert_eq!(explain(&words("dashboard")), None, "built now");
        assert_eq!(explain(&words("nonsense")), None);
    }
}
