//! Which dotted keys `hermes config set` knows, so a key Hermes never reads
//! (a typo, a wrong section) is pointed out when it is set, with the nearest
//! known key, as the reference does.

/// Known keys, one per line: the reference's defaults, then ours.
const KNOWN: &str = include_str!("config_keys.txt");

/// Sections whose inner keys users name themselves (servers, providers,
/// platforms…): anything below them is accepted.
const OPEN_SECTIONS: &[&str] = &[
    "providers",
    "credential_pool_strategies",
    "mcp_servers",
    "hooks",
    "quick_commands",
    "personalities",
    "command_allowlist",
    "model_catalog",
    "channel_prompts",
    "server_actions",
    "secrets",
    "goals",
    "custom_providers",
    "platforms",
    "discord",
    "telegram",
    "slack",
    "whatsapp",
    "signal",
    "mattermost",
    "matrix",
    "email",
    "sms",
    "sessions",
    "checkpoints",
    // `model` is a name or a section (default, provider, base_url, api_key,
    // api_mode, context_length …).
    "model",
    // hermes-rs's own sections.
    "sessiondb",
    "local",
    "plugins",
    "platform_toolsets",
];

/// What [`check`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum KeyCheck {
    /// Hermes reads it.
    Known,
    /// Hermes never reads it; maybe the user meant the suggestion.
    Unknown(Option<String>),
}

fn known() -> impl Iterator<Item = &'static str> {
    KNOWN
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// Whether `key` (dotted) is one Hermes reads.
pub fn check(key: &str) -> KeyCheck {
    let segments: Vec<&str> = key.split('.').collect();
    let top = segments[0];
    if top.starts_with('_') || OPEN_SECTIONS.contains(&top) || segments.contains(&"platforms") {
        return KeyCheck::Known;
    }
    let mut consumed = String::new();
    for segment in &segments {
        let parent = consumed.clone();
        if !consumed.is_empty() {
            consumed.push('.');
        }
        consumed.push_str(segment);
        if known().any(|k| k == consumed) {
            // A leaf reached before the path ends: setting below a scalar
            // replaces it with a section, which the reference accepts too.
            if !known().any(|k| k.starts_with(&format!("{consumed}."))) {
                return KeyCheck::Known;
            }
            continue;
        }
        let siblings: Vec<&str> = known().filter_map(|k| sibling_of(k, &parent)).collect();
        return KeyCheck::Unknown(closest(segment, &siblings).map(|near| {
            let mut fixed: Vec<&str> = parent.split('.').filter(|s| !s.is_empty()).collect();
            fixed.push(near);
            let rest = &segments[fixed.len()..];
            fixed.extend_from_slice(rest);
            fixed.join(".")
        }));
    }
    KeyCheck::Known
}

/// The segment of `key` right below `parent` (`parent` empty: the top one).
fn sibling_of<'a>(key: &'a str, parent: &str) -> Option<&'a str> {
    let below = if parent.is_empty() {
        key
    } else {
        key.strip_prefix(parent)?.strip_prefix('.')?
    };
    below
        .split('.')
        .next()
        .filter(|s| !below.is_empty() && !s.is_empty())
}

/// The candidate nearest `word`, when it is near enough to be a likely typo.
fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (similarity(word, c), *c))
        .filter(|(score, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// 1.0 for equal words, less by their edit distance over the longer length.
fn similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    1.0 - row[b.len()] as f64 / longest as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_keys_open_sections_and_leaves_pass() {
        for key in [
            "agent.max_turns",
            "terminal.backend",
            "model",
            "model.default",
            "display.skin",
            "mcp_servers.github.command",
            "platforms.api_server.extra.port",
            "gateway.platforms.telegram.enabled",
            "sessiondb.url",
            "_test.marker",
        ] {
            assert_eq!(check(key), KeyCheck::Known, "{key}");
        }
    }

    #[test]
    fn unknown_keys_get_the_nearest_known_one() {
        assert_eq!(
            check("agent.max_turn"),
            KeyCheck::Unknown(Some("agent.max_turns".into()))
        );
        assert_eq!(
            check("termnal.backend"),
            KeyCheck::Unknown(Some("terminal.backend".into()))
        );
        assert_eq!(check("display.nonsense.key"), KeyCheck::Unknown(None));
        assert_eq!(check("zzzz"), KeyCheck::Unknown(None));
    }
}
