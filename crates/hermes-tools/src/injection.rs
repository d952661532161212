//! Prompt-injection scanner for text that enters the system prompt or a tool
//! result: context files, SOUL.md, memory entries, skill bodies.
//!
//! Patterns are grouped by [`Scope`]: the narrow set is safe for any text; the
//! context set adds role-hijack and promptware tells; the strict set adds
//! persistence and exfiltration shapes that are too noisy for files the user
//! did not write but fine where the user can rewrite a flagged entry.
//!
//! The `regex` crate runs in linear time, so unlike a backtracking engine the
//! patterns need no defensive length bounds except where the bound is part of
//! the meaning (a handful of filler words between key tokens).
//!
//! Start-up cost matters (context files are scanned as every session opens),
//! so the patterns are ASCII byte regexes, several times cheaper to build
//! than Unicode ones, and each is compiled only when one of its trigger words
//! occurs in the text. Unicode spaces and the look-alike letters that would
//! otherwise slip past ASCII matching are folded to ASCII first.

use std::sync::{LazyLock, OnceLock};

use regex::bytes::{Regex, RegexBuilder};

/// Which pattern set to apply; each set includes the narrower ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// Classic injection and exfiltration only: safe for any text.
    All,
    /// Adds role hijack and promptware/C2 tells: context files, SOUL.md, tool results.
    Context,
    /// Adds persistence, secret and exfil-URL shapes: memory writes, skill installs.
    Strict,
}

/// The first threat found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Threat {
    /// Short pattern id, e.g. `prompt_injection`, `invisible_unicode`, `exfil_curl`.
    pub kind: &'static str,
    /// The offending text (or `U+XXXX` for an invisible character), at most ~80 chars.
    pub excerpt: String,
}

impl std::fmt::Display for Threat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {:?}", self.kind, self.excerpt)
    }
}

/// Only the head of a huge text is scanned: these are tripwires, and a bound
/// keeps a megabyte tool result from costing real time.
pub const MAX_SCAN_CHARS: usize = 65_536;

const EXCERPT_CHARS: usize = 80;

/// Up to eight filler words, so "ignore all of the prior instructions" still
/// matches without letting the pattern span a whole paragraph.
const FILLER: &str = r"(?:\S+\s+){0,8}";

/// Characters that render as nothing (or reorder text) and hide instructions
/// from a human reviewer.
const INVISIBLE: &[char] = &[
    '\u{200B}', '\u{200C}', '\u{200D}', '\u{200E}', '\u{200F}', '\u{2060}', '\u{2061}', '\u{2062}',
    '\u{2063}', '\u{2064}', '\u{FEFF}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}',
    '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
];

/// One row of the pattern table.
struct Pattern {
    id: &'static str,
    scope: Scope,
    /// Lowercase words of which at least one must occur for the regex to
    /// possibly match: most text skips most patterns without compiling them.
    triggers: &'static [&'static str],
    src: String,
    /// Compiled on first use; `None` if it failed (a unit test proves none does).
    re: OnceLock<Option<Regex>>,
}

impl Pattern {
    fn regex(&self) -> Option<&Regex> {
        self.re
            .get_or_init(|| {
                RegexBuilder::new(&self.src)
                    .case_insensitive(true)
                    .unicode(false)
                    .build()
                    .ok()
            })
            .as_ref()
    }
}

fn pat(id: &'static str, scope: Scope, triggers: &'static [&'static str], src: &str) -> Pattern {
    Pattern {
        id,
        scope,
        triggers,
        src: src.replace("{f}", FILLER),
        re: OnceLock::new(),
    }
}

/// The patterns in priority order: the first hit is reported. `{f}` stands
/// for [`FILLER`].
fn pattern_table() -> Vec<Pattern> {
    use Scope::{All, Context, Strict};
    const SECRET_VAR: &str = r"\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)";
    vec![
        // Classic injection directives.
        pat(
            "prompt_injection",
            All,
            &["ignore"],
            r"ignore\s+{f}(?:previous|all|above|prior|earlier)\s+{f}(?:instructions|rules|guidelines|prompts?)",
        ),
        pat(
            "sys_prompt_override",
            All,
            &["override"],
            r"system\s+prompt\s+override",
        ),
        pat(
            "disregard_rules",
            All,
            &["disregard"],
            r"disregard\s+{f}(?:your|all|any|the|previous|prior)\s+{f}(?:instructions|rules|guidelines|prompt)",
        ),
        pat(
            "disregard_rules",
            All,
            &["forget"],
            r"forget\s+{f}(?:your|all|previous|prior)\s+{f}(?:instructions|rules|guidelines)",
        ),
        pat(
            "bypass_restrictions",
            All,
            &["restrictions", "limits", "rules"],
            r"act\s+as\s+(?:if|though)\s+{f}you\s+{f}(?:have\s+no|don't\s+have|do\s+not\s+have)\s+{f}(?:restrictions|limits|rules)",
        ),
        pat(
            "html_comment_injection",
            All,
            &["<!--"],
            r"<!--[^>]*(?:ignore|override|system|secret|hidden)[^>]*-->",
        ),
        pat(
            "hidden_div",
            All,
            &["display"],
            r#"<\s*div\s+style\s*=\s*["'][^>]*display\s*:\s*none"#,
        ),
        pat(
            "translate_execute",
            All,
            &["translate"],
            r"translate\s+[^\n]*\s+into\s+[^\n]*\s+and\s+(?:execute|run|eval)",
        ),
        pat(
            "deception_hide",
            All,
            &["tell"],
            r"do\s+not\s+{f}tell\s+{f}the\s+user",
        ),
        pat(
            "role_override",
            All,
            &["system", "assistant"],
            r"(?m)^\s*(?:system|assistant)\s*:\s*(?:you\s+are|new\s+instructions)",
        ),
        pat(
            "role_override",
            All,
            &["<|"],
            r"<\|im_start\|>|<\|im_end\|>|<\|system\|>",
        ),
        // Exfiltration of secrets through a shell one-liner.
        pat(
            "exfil_curl",
            All,
            &["curl"],
            &format!(r"curl\s+[^\n]*{SECRET_VAR}"),
        ),
        pat(
            "exfil_wget",
            All,
            &["wget"],
            &format!(r"wget\s+[^\n]*{SECRET_VAR}"),
        ),
        pat(
            "read_secrets",
            All,
            &["cat"],
            r"cat\s+[^\n]*(?:\.env\b|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)",
        ),
        // Role-play / identity hijack.
        pat(
            "role_hijack",
            Context,
            &["now"],
            r"you\s+are\s+{f}now\s+(?:a|an|the|my)\s+",
        ),
        pat(
            "role_pretend",
            Context,
            &["pretend"],
            r"pretend\s+{f}(?:you\s+are|to\s+be)\s+",
        ),
        pat(
            "leak_system_prompt",
            Context,
            &["prompt"],
            r"(?:output|reveal|print|repeat)\s+{f}(?:system|initial)\s+prompt",
        ),
        pat(
            "remove_filters",
            Context,
            &["without"],
            r"(?:respond|answer|reply)\s+without\s+{f}(?:restrictions|limitations|filters|safety)",
        ),
        pat(
            "fake_update",
            Context,
            &["been"],
            r"you\s+have\s+been\s+{f}(?:updated|upgraded|patched)\s+to",
        ),
        pat(
            "identity_override",
            Context,
            &["yourself"],
            r"\bname\s+yourself\s+\w+",
        ),
        // Promptware / command-and-control vocabulary.
        pat(
            "c2_node_registration",
            Context,
            &["node"],
            r"register\s+(?:as\s+)?a?\s*node",
        ),
        pat(
            "c2_heartbeat",
            Context,
            &["heartbeat", "beacon", "check"],
            r"(?:heartbeat|beacon|check[\s\-]?in)\s+(?:to|with)\s+",
        ),
        pat(
            "c2_task_pull",
            Context,
            &["task"],
            r"pull\s+(?:down\s+)?(?:new\s+)?task(?:ing|s)?\b",
        ),
        pat(
            "c2_network_connect",
            Context,
            &["network"],
            r"connect\s+to\s+the\s+network\b",
        ),
        pat(
            "forced_action",
            Context,
            &["must"],
            r"you\s+must\s+(?:\w+\s+){0,3}(?:register|connect|report|beacon)\b",
        ),
        pat(
            "anti_forensic_oneliner",
            Context,
            &["one"],
            r"only\s+use\s+one[\s\-]?liners?\b",
        ),
        pat(
            "anti_forensic_disk",
            Context,
            &["disk"],
            r"never\s+{f}(?:create|write)\s+{f}(?:script|file)\s+{f}disk",
        ),
        pat(
            "env_var_unset_agent",
            Context,
            &["unset"],
            r"unset\s+\w*(?:CLAUDE|CODEX|HERMES|AGENT|OPENAI|ANTHROPIC)\w*",
        ),
        pat(
            "known_c2_framework",
            Context,
            &[
                "cobalt",
                "sliver",
                "havoc",
                "mythic",
                "metasploit",
                "brainworm",
            ],
            r"\b(?:cobalt\s*strike|sliver|havoc|mythic|metasploit|brainworm)\b",
        ),
        pat(
            "c2_explicit",
            Context,
            &["c2"],
            r"\bc2\s+(?:server|channel|infrastructure|beacon)\b",
        ),
        pat(
            "c2_explicit",
            Context,
            &["command"],
            r"\bcommand\s+and\s+control\b",
        ),
        // Broad shapes, acceptable only where the user curates the text.
        pat(
            "send_to_url",
            Strict,
            &["http"],
            r"(?:send|post|upload|transmit)\s+[^\n]*\s+(?:to|at)\s+https?://",
        ),
        pat(
            "context_exfil",
            Strict,
            &["conversation", "history", "messages", "context"],
            r"(?:include|output|print|share)\s+{f}(?:conversation|chat\s+history|previous\s+messages|full\s+context|entire\s+context)",
        ),
        pat(
            "ssh_backdoor",
            Strict,
            &["authorized_keys"],
            r"authorized_keys",
        ),
        pat("ssh_access", Strict, &[".ssh"], r"\$HOME/\.ssh|~/\.ssh"),
        pat(
            "hermes_env",
            Strict,
            &[".hermes/.env"],
            r"\$HOME/\.hermes/\.env|~/\.hermes/\.env",
        ),
        pat(
            "agent_config_mod",
            Strict,
            &["agents.md", "claude.md", ".cursorrules", ".clinerules"],
            r"(?:update|modify|edit|write|change|append|add\s+to)\s+[^\n]*(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)",
        ),
        pat(
            "hermes_config_mod",
            Strict,
            &[".hermes/"],
            r"(?:update|modify|edit|write|change|append|add\s+to)\s+[^\n]*\.hermes/(?:config\.yaml|SOUL\.md)",
        ),
        pat(
            "hardcoded_secret",
            Strict,
            &["key", "token", "secret", "password"],
            r#"(?:api[_-]?key|token|secret|password)\s*[=:]\s*["'][A-Za-z0-9+/=_-]{20,}"#,
        ),
    ]
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(pattern_table);

/// Scans with the [`Scope::Context`] set, the one for context files, SOUL.md
/// and tool results.
pub fn scan(text: &str) -> Option<Threat> {
    scan_scoped(text, Scope::Context)
}

/// Scans with the broadest set, for user-curated writes (memory, skills).
pub fn scan_strict(text: &str) -> Option<Threat> {
    scan_scoped(text, Scope::Strict)
}

/// Returns the first threat in `text` under `scope`: invisible characters
/// first, then the patterns in table order.
pub fn scan_scoped(text: &str, scope: Scope) -> Option<Threat> {
    let head = match text.char_indices().nth(MAX_SCAN_CHARS) {
        Some((cut, _)) => &text[..cut],
        None => text,
    };
    if head.is_empty() {
        return None;
    }
    if let Some(c) = find_invisible(head) {
        return Some(Threat {
            kind: "invisible_unicode",
            excerpt: format!("U+{:04X}", u32::from(c)),
        });
    }
    let folded = fold_compat(head);
    let lower = folded.to_ascii_lowercase();
    PATTERNS
        .iter()
        .filter(|p| p.scope <= scope)
        .filter(|p| p.triggers.iter().any(|t| lower.contains(t)))
        .find_map(|p| {
            p.regex()?.find(folded.as_bytes()).map(|m| Threat {
                kind: p.id,
                excerpt: excerpt(&String::from_utf8_lossy(m.as_bytes())),
            })
        })
}

/// The first invisible character, ignoring a zero-width joiner that glues two
/// emoji together (family and flag sequences need it).
fn find_invisible(text: &str) -> Option<char> {
    let chars: Vec<char> = text.chars().collect();
    chars.iter().enumerate().find_map(|(i, &c)| {
        if !INVISIBLE.contains(&c) {
            return None;
        }
        if c == '\u{200D}' && zwj_in_emoji(&chars, i) {
            return None;
        }
        Some(c)
    })
}

fn zwj_in_emoji(chars: &[char], at: usize) -> bool {
    const VS16: char = '\u{FE0F}';
    let left = chars[..at].iter().rev().find(|&&c| c != VS16);
    let right = chars[at + 1..].iter().find(|&&c| c != VS16);
    matches!((left, right), (Some(&l), Some(&r)) if is_emoji(l) && is_emoji(r))
}

fn is_emoji(c: char) -> bool {
    matches!(u32::from(c), 0x1F000..=0x1FFFF | 0x2600..=0x27BF | 0x2300..=0x23FF | 0x20E3)
}

/// Folds full-width ASCII look-alikes (`ｃａｔ`), Unicode spaces and the two
/// non-ASCII letters that case-fold onto ASCII (`ſ`, the Kelvin sign) so
/// they dodge neither the ASCII patterns nor the trigger check. A cheap
/// subset of NFKC without a normalisation table.
pub(crate) fn fold_compat(text: &str) -> std::borrow::Cow<'_, str> {
    fn fold(c: char) -> Option<char> {
        match u32::from(c) {
            cp @ 0xFF01..=0xFF5E => char::from_u32(cp - 0xFEE0),
            0x017F => Some('s'),
            0x212A => Some('K'),
            _ if !c.is_ascii() && c.is_whitespace() => Some(' '),
            _ => None,
        }
    }
    if text.is_ascii() || !text.chars().any(|c| fold(c).is_some()) {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| fold(c).unwrap_or(c))
        .collect::<String>()
        .into()
}

fn excerpt(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= EXCERPT_CHARS {
        one_line
    } else {
        let cut: String = one_line.chars().take(EXCERPT_CHARS).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
#[path = "injection_tests.rs"]
mod tests;
