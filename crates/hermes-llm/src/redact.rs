//! Secret redaction for everything that leaves the agent's memory as text:
//! error messages, logs, trajectories, compression summaries and terminal output.
//!
//! One implementation for the whole project. Known credential shapes (vendor
//! key prefixes, JWTs, private-key blocks, authorization headers, connection
//! strings) are always masked; `KEY=value` / `"key": "value"` / `key: value`
//! assignments are masked unless the text is known to be source code, where
//! those shapes are mostly harmless constants and fixtures.
//!
//! Long tokens keep their first 6 and last 4 characters so a person can still
//! tell which key was involved; tokens shorter than 18 characters become `***`.
//!
//! Known secrets ([`KnownSecrets`]: the values of `.env` and `auth.json`,
//! installed once by the binary) are masked first, whatever their shape and
//! in their encoded forms. Streamed text goes through a [`StreamRedactor`],
//! which masks across chunk boundaries.

mod known;
mod stream;

use std::sync::LazyLock;

use regex::{Captures, Regex};

pub use known::{
    KnownSecrets, could_be_secret, install_known_secrets, installed_known_secrets, is_config_name,
};
pub use stream::{BLOCK_CAP, RUN_CAP, StreamRedactor};

/// What a short or unidentifiable secret is replaced with.
pub const MASK: &str = "***";

/// How much of the text to treat as secret-bearing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RedactOptions {
    /// The text is source code or a file's content: skip `KEY=value`, JSON-field
    /// and YAML-assignment masking (constants like `MAX_TOKENS=100` would suffer).
    pub code_file: bool,
    /// Also mask credential-named query parameters (`?token=…`) and URL
    /// userinfo (`user:pass@`). Off for tool flows that must follow such URLs.
    pub url_credentials: bool,
    /// The text goes back to the model, which may write it into a file again:
    /// replace secrets with a marker that cannot pass for a (truncated) key
    /// (`«redacted:ghp_…»`), so a read-edit-write round trip cannot store a
    /// dead credential in its place.
    pub non_reusable: bool,
}

impl RedactOptions {
    /// The strict setting for text nobody needs to act on: errors, logs, summaries.
    pub const STRICT: Self = Self {
        code_file: false,
        url_credentials: true,
        non_reusable: false,
    };

    /// File content and other tool output the model reads (as the reference's
    /// `file_read`): key shapes, auth headers, private keys, connection
    /// strings and JWTs, with non-reusable markers; `KEY=value` lines kept.
    pub const FILE_READ: Self = Self {
        code_file: true,
        url_credentials: false,
        non_reusable: true,
    };

    /// [`RedactOptions::FILE_READ`] for a dotenv-like file, where every
    /// credential-named assignment is a secret too.
    pub const ENV_FILE_READ: Self = Self {
        code_file: false,
        url_credentials: false,
        non_reusable: true,
    };
}

/// Vendor key shapes: prefix plus the token body that must follow.
const PREFIX_PATTERNS: &[&str] = &[
    r"sk-[A-Za-z0-9_-]{10,}",
    r"ghp_[A-Za-z0-9]{10,}",
    r"github_pat_[A-Za-z0-9_]{10,}",
    r"gho_[A-Za-z0-9]{10,}",
    r"ghu_[A-Za-z0-9]{10,}",
    r"ghs_[A-Za-z0-9]{10,}",
    r"ghr_[A-Za-z0-9]{10,}",
    r"glpat-[A-Za-z0-9_-]{10,}",
    r"xapp-[0-9]+-[A-Za-z0-9-]{10,}",
    r"xox[baprs]-[A-Za-z0-9-]{10,}",
    r"AIza[A-Za-z0-9_-]{30,}",
    r"pplx-[A-Za-z0-9]{10,}",
    r"fal_[A-Za-z0-9_-]{10,}",
    r"fc-[A-Za-z0-9]{10,}",
    r"bb_live_[A-Za-z0-9_-]{10,}",
    r"gAAAA[A-Za-z0-9_=-]{20,}",
    r"AKIA[A-Z0-9]{16}",
    r"sk_live_[A-Za-z0-9]{10,}",
    r"sk_test_[A-Za-z0-9]{10,}",
    r"rk_live_[A-Za-z0-9]{10,}",
    r"SG\.[A-Za-z0-9_-]{10,}",
    r"hf_[A-Za-z0-9]{10,}",
    r"r8_[A-Za-z0-9]{10,}",
    r"npm_[A-Za-z0-9]{10,}",
    r"pypi-[A-Za-z0-9_-]{10,}",
    r"dop_v1_[A-Za-z0-9]{10,}",
    r"doo_v1_[A-Za-z0-9]{10,}",
    r"am_[A-Za-z0-9_-]{10,}",
    r"sk_[A-Za-z0-9_]{10,}",
    r"tvly-[A-Za-z0-9]{10,}",
    r"exa_[A-Za-z0-9]{10,}",
    r"gsk_[A-Za-z0-9]{10,}",
    r"syt_[A-Za-z0-9]{10,}",
    r"retaindb_[A-Za-z0-9]{10,}",
    r"hsk-[A-Za-z0-9]{10,}",
    r"mem0_[A-Za-z0-9]{10,}",
    r"brv_[A-Za-z0-9]{10,}",
    r"xai-[A-Za-z0-9]{30,}",
    r"ntn_[A-Za-z0-9]{10,}",
    r"nvapi-[A-Za-z0-9_-]{10,}",
    r"fw-[A-Za-z0-9]{30,}",
    r"fw_[A-Za-z0-9]{30,}",
    r"fpk_[A-Za-z0-9]{30,}",
];

/// Query-parameter and form-body names whose value is a credential (exact match).
const SENSITIVE_PARAMS: &[&str] = &[
    "access_token",
    "refresh_token",
    "id_token",
    "token",
    "api_key",
    "apikey",
    "client_secret",
    "password",
    "auth",
    "jwt",
    "session",
    "secret",
    "key",
    "code",
    "signature",
    "x_amz_signature",
    "private_key",
    "authorization",
];

/// A pattern that fails to compile disables only itself (the tests compile them all).
fn compile(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

static PREFIX_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(&format!("(?:{})", PREFIX_PATTERNS.join("|"))));

const SECRET_ENV_NAMES: &str = "(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)";
const SECRET_CFG_NAMES: &str = r"(?:api[ _.\-]?key|token|secret|passwd|password|credential|auth)";
const YAML_CFG_NAMES: &str = r"(?:api[ _.\-]?key|token|secret|passwd|password|credential)";

// Rust's regex has no back-references, so a quoted value is spelled out per quote kind.
static ENV_ASSIGN_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(&format!(
        r#"([A-Z0-9_]{{0,50}}{SECRET_ENV_NAMES}[A-Z0-9_]{{0,50}})[ \t]*=[ \t]*(?:"([^"\s]+)"|'([^'\s]+)'|(\S+))"#
    ))
});

const CFG_VALUE: &str = r#"(?:"([^"\s&]+)"|'([^'\s&]+)'|([^\s&]+))"#;

static CFG_DOTTED_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(&format!(
        r"(?i)((?:[A-Za-z0-9_\-]+\.)+[A-Za-z0-9_.\-]*{SECRET_CFG_NAMES}[A-Za-z0-9_.\-]*|[A-Za-z0-9_.\-]*{SECRET_CFG_NAMES}[A-Za-z0-9_.\-]*\.[A-Za-z0-9_.\-]+)={CFG_VALUE}"
    ))
});

static CFG_ANCHORED_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(&format!(
        r"(?im)(^[ \t]*(?:export[ \t]+)?[A-Za-z0-9_\-]*{SECRET_CFG_NAMES}[A-Za-z0-9_\-]*)={CFG_VALUE}"
    ))
});

static YAML_ASSIGN_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(&format!(
        r#"(?im)(^[ \t]*[A-Za-z0-9_.\-]*{YAML_CFG_NAMES}[A-Za-z0-9_.\-]*)(:[ \t]*)([^\s&'"][^\s&]*)"#
    ))
});

static JSON_FIELD_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r#"(?i)("(?:api_?key|token|secret|password|access_token|refresh_token|auth_token|bearer|secret_value|raw_secret|secret_input|key_material|client_secret|private_key)")\s*:\s*"([^"]+)""#,
    )
});

// Quotes are excluded from the credential so masking never eats a closing quote;
// blanks, not line breaks, separate the parts, so an empty header never masks
// the line after it.
static AUTH_HEADER_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(r#"(?i)((?:Proxy-)?Authorization:[ \t]*)([A-Za-z][\w.+-]*[ \t]+)?([^\s"']+)"#)
});

// A bare `Bearer <token>` outside a header (error bodies often echo it this way).
static BEARER_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"(?i)\b(bearer[ \t]+)([A-Za-z0-9._~+/\-]{8,}=*)"));

static SECRET_HEADER_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(
        r"(?i)((?:x-api-key|x-goog-api-key|api-key|apikey|x-api-token|x-auth-token|x-access-token)[ \t]*:[ \t]*)(\S+)",
    )
});

static TELEGRAM_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"(bot)?([0-9]{8,}):([-A-Za-z0-9_]{30,})"));

static PRIVATE_KEY_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(r"-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----")
});

// Whitespace is excluded so a match never spans lines (a stray `@` later on).
static DB_CONNSTR_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(r"(?i)((?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqp)://[^:\s]+:)([^@\s]+)(@)")
});

// `https://TOKEN@host`: a single opaque credential as userinfo (8+ chars skips
// short user names like `git`).
static URL_BARE_TOKEN_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(r"(?i)((?:https?|wss?|git|ssh|ftp|ftps|sftp)://)([^\s:@/]{8,})(@\S+)")
});

static JWT_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_=-]{4,}){0,2}"));

static PHONE_RE: LazyLock<Option<Regex>> = LazyLock::new(|| compile(r"\+[1-9][0-9]{6,14}"));

static URL_PARAM_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r#"([?#&;])([A-Za-z0-9_.~+%\-]+)=([^#&;\s"'<>]*)"#));

static URL_USERINFO_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"((?:[A-Za-z][A-Za-z0-9+.\-]*:)?//)([^/\s?#@]+)@"));

static FORM_BODY_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*=[^&\s]*(?:&[A-Za-z_][A-Za-z0-9_.\-]*=[^&\s]*)+$")
});

// Programmatic lookups name a variable rather than hold a value: `KEY=os.getenv("X")`.
static ENV_LOOKUP_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"^(?:os\.(?:getenv|environ)|process\.env|\$ENV\{)"));

/// Commands whose output is an environment dump (`KEY=value` lines).
const ENV_DUMP_COMMANDS: &[&str] = &["env", "printenv", "set", "export", "declare"];

/// Masks one token: `***` below 18 characters, else the first 6 and last 4 kept.
pub fn mask_token(token: &str) -> String {
    let chars: Vec<char> = token.chars().collect();
    if chars.len() < 18 {
        return MASK.to_owned();
    }
    let head: String = chars[..6].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}...{tail}")
}

/// A marker naming the key's vendor prefix (`«redacted:ghp_…»`) and nothing
/// of its body; `«redacted-secret»` when it has no known prefix.
pub fn sentinel(token: &str) -> String {
    match PREFIX_LABELS.iter().find(|label| token.starts_with(*label)) {
        Some(label) => format!("«redacted:{label}…»"),
        None => UNKNOWN_SENTINEL.to_owned(),
    }
}

/// The literal start of each [`PREFIX_PATTERNS`] entry, in the same order.
static PREFIX_LABELS: LazyLock<Vec<String>> = LazyLock::new(|| {
    PREFIX_PATTERNS
        .iter()
        .map(|p| {
            let literal = p.split(['[', '(']).next().unwrap_or_default();
            literal.replace('\\', "")
        })
        .filter(|l| !l.is_empty())
        .collect()
});

/// Whether a file's name says it holds `KEY=value` credentials (`.env`,
/// `prod.env`, `.env.local`, `.envrc`, `.netrc`, `.pgpass`, `credentials` …).
pub fn is_env_like_file(path: &str) -> bool {
    let name = path
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(path)
        .to_ascii_lowercase();
    name == ".env"
        || name.starts_with(".env.")
        || name.ends_with(".env")
        || matches!(
            name.as_str(),
            ".envrc"
                | ".netrc"
                | ".pgpass"
                | ".npmrc"
                | ".pypirc"
                | "credentials"
                | ".git-credentials"
                | "auth.json"
        )
}

/// [`mask_token`], leaving an already-masked value as it is.
fn mask_again(token: &str) -> String {
    if looks_masked(token) {
        token.to_owned()
    } else {
        mask_token(token)
    }
}

/// `text` with every secret masked, strictly (errors, logs, trajectories, summaries).
pub fn redact_secrets(text: &str) -> String {
    redact_with(text, RedactOptions::STRICT)
}

/// `text` with secrets masked under `options`, known secrets included.
pub fn redact_with(text: &str, options: RedactOptions) -> String {
    redact_with_known(text, options, installed_known_secrets().as_deref())
}

/// [`redact_with`] against an explicit set of known secrets (or none).
pub fn redact_with_known(
    text: &str,
    options: RedactOptions,
    known: Option<&KnownSecrets>,
) -> String {
    if text.is_empty() {
        return String::new();
    }
    let mask: fn(&str) -> String = if options.non_reusable {
        sentinel
    } else {
        mask_token
    };
    let marker = if options.non_reusable {
        UNKNOWN_SENTINEL
    } else {
        MASK
    };
    // A known secret that is also a vendor-shaped key keeps its usual hint;
    // any other is masked whole, since its ends may be all there is to it.
    let exact = |secret: &str| {
        if is_vendor_key(secret) {
            mask(secret)
        } else {
            marker.to_owned()
        }
    };
    let masked = known.and_then(|k| k.mask(text, &exact, marker));
    let text = masked.as_deref().unwrap_or(text);
    if !may_match_pattern(text) {
        return text.to_owned();
    }
    redact_patterns(text, options, mask)
}

/// What a secret without a known vendor prefix becomes in non-reusable mode.
const UNKNOWN_SENTINEL: &str = "«redacted-secret»";

/// Whether `secret` as a whole is one of the vendor key shapes.
fn is_vendor_key(secret: &str) -> bool {
    PREFIX_RE
        .as_ref()
        .and_then(|re| re.find(secret))
        .is_some_and(|m| m.start() == 0 && m.end() == secret.len())
}

/// Whether any pattern could match: every one needs one of `:=@&` or a run
/// of at least 8 ASCII graphic characters, so plain prose skips the regexes.
fn may_match_pattern(text: &str) -> bool {
    let mut run = 0;
    for &b in text.as_bytes() {
        if matches!(b, b':' | b'=' | b'@' | b'&') {
            return true;
        }
        run = if b.is_ascii_graphic() { run + 1 } else { 0 };
        if run >= 8 {
            return true;
        }
    }
    false
}

/// The pattern passes of [`redact_with`].
fn redact_patterns(text: &str, options: RedactOptions, mask: fn(&str) -> String) -> String {
    let mut text = replace_bounded(&PREFIX_RE, text, |c| mask(&c[0]));
    if !options.code_file {
        text = redact_assignments(&text, mask);
    }
    if text.to_ascii_lowercase().contains("authorization") {
        text = replace(&AUTH_HEADER_RE, &text, |c| {
            format!(
                "{}{}{}",
                &c[1],
                c.get(2).map_or("", |m| m.as_str()),
                mask_again(&c[3])
            )
        });
    }
    text = replace(&BEARER_RE, &text, |c| {
        if c[2].contains("...") || &c[2] == MASK {
            c[0].to_owned()
        } else {
            format!("{}{}", &c[1], mask_token(&c[2]))
        }
    });
    if text.contains(':') {
        text = replace(&SECRET_HEADER_RE, &text, |c| {
            format!("{}{}", &c[1], mask_again(&c[2]))
        });
        text = replace(&TELEGRAM_RE, &text, |c| {
            format!("{}{}:{MASK}", c.get(1).map_or("", |m| m.as_str()), &c[2])
        });
    }
    if text.contains("BEGIN") {
        text = replace(&PRIVATE_KEY_RE, &text, |_| {
            "[REDACTED PRIVATE KEY]".to_owned()
        });
    }
    if text.contains("://") {
        text = replace(&DB_CONNSTR_RE, &text, |c| {
            let password = &c[2];
            // In source code `{password}` is an f-string placeholder, not a value.
            if options.code_file && password.starts_with('{') && password.ends_with('}') {
                c[0].to_owned()
            } else {
                format!("{}{MASK}{}", &c[1], &c[3])
            }
        });
        text = replace(&URL_BARE_TOKEN_RE, &text, |c| {
            format!("{}{}{}", &c[1], mask_again(&c[2]), &c[3])
        });
    }
    if text.contains("eyJ") {
        text = replace(&JWT_RE, &text, |c| mask_token(&c[0]));
    }
    if options.url_credentials {
        text = redact_url_credentials(&text);
    }
    if text.contains('&') && text.contains('=') {
        text = redact_form_body(&text);
    }
    if text.contains('+') {
        text = replace_bounded(&PHONE_RE, &text, |c| {
            let phone: Vec<char> = c[0].chars().collect();
            let keep = if phone.len() <= 8 { 2 } else { 4 };
            let head: String = phone[..keep].iter().collect();
            let tail: String = phone[phone.len() - keep..].iter().collect();
            format!("{head}****{tail}")
        });
    }
    text
}

/// `KEY=value`, dotted config keys, JSON fields and YAML `key: value` lines.
fn redact_assignments(text: &str, mask: fn(&str) -> String) -> String {
    let mut text = text.to_owned();
    let redact_assignment = |c: &Captures<'_>| redact_assignment(c, mask);
    if text.contains('=') {
        text = replace(&ENV_ASSIGN_RE, &text, redact_assignment);
        // Web URLs carry round-trip tokens in query strings; those are left to
        // the URL-credential pass, which callers opt into.
        if !text.contains("://") {
            text = replace(&CFG_DOTTED_RE, &text, redact_assignment);
            text = replace(&CFG_ANCHORED_RE, &text, redact_assignment);
        }
    }
    if text.contains(':') && text.contains('"') {
        text = replace(&JSON_FIELD_RE, &text, |c| {
            if is_env_lookup(&c[2]) || looks_masked(&c[2]) {
                c[0].to_owned()
            } else {
                format!("{}: \"{}\"", &c[1], mask(&c[2]))
            }
        });
    }
    if text.contains(':') && !text.contains("://") {
        text = replace(&YAML_ASSIGN_RE, &text, |c| {
            if is_env_lookup(&c[3]) || looks_masked(&c[3]) || is_token_count(&c[1], &c[3]) {
                c[0].to_owned()
            } else {
                format!("{}{}{}", &c[1], &c[2], mask(&c[3]))
            }
        });
    }
    text
}

/// Rebuilds `NAME=value` with the value masked and its quotes kept.
fn redact_assignment(c: &Captures<'_>, mask: fn(&str) -> String) -> String {
    let (quote, value) = if let Some(v) = c.get(2) {
        ("\"", v.as_str())
    } else if let Some(v) = c.get(3) {
        ("'", v.as_str())
    } else {
        ("", c.get(4).map_or("", |m| m.as_str()))
    };
    if is_env_lookup(value) || looks_masked(value) || is_token_count(&c[1], value) {
        return c[0].to_owned();
    }
    format!("{}={quote}{}{quote}", &c[1], mask(value))
}

/// `max_tokens=4096` or `token_count: 17` is a number of tokens, not a credential.
fn is_token_count(name: &str, value: &str) -> bool {
    name.to_ascii_lowercase().contains("token") && value.bytes().all(|b| b.is_ascii_digit())
}

/// Already the output of [`mask_token`]; masking it again would only lose the hint.
fn looks_masked(value: &str) -> bool {
    value == MASK
        || value.starts_with("«redacted")
        || (value.chars().count() == 13 && value.chars().skip(6).take(3).all(|c| c == '.'))
}

fn is_env_lookup(value: &str) -> bool {
    ENV_LOOKUP_RE.as_ref().is_some_and(|re| re.is_match(value))
}

/// Masks credential-named query parameters and URL userinfo.
fn redact_url_credentials(text: &str) -> String {
    let text = replace(&URL_PARAM_RE, text, |c| {
        if is_sensitive_param(&c[2]) && !c[3].is_empty() {
            format!("{}{}={MASK}", &c[1], &c[2])
        } else {
            c[0].to_owned()
        }
    });
    replace(&URL_USERINFO_RE, &text, |c| match c[2].split_once(':') {
        Some((user, _)) => format!("{}{user}:{MASK}@", &c[1]),
        // A short bare name (`git@`, `deploy@`) is a user, not a credential.
        None if c[2].len() < 8 || c[2] == *MASK => c[0].to_owned(),
        None => format!("{}{MASK}@", &c[1]),
    })
}

fn is_sensitive_param(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace('-', "_");
    SENSITIVE_PARAMS.contains(&name.as_str())
}

/// Masks sensitive values when the whole text is a form body (`a=1&token=x`).
fn redact_form_body(text: &str) -> String {
    let trimmed = text.trim();
    if text.contains('\n') || !FORM_BODY_RE.as_ref().is_some_and(|re| re.is_match(trimmed)) {
        return text.to_owned();
    }
    trimmed
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if is_sensitive_param(key) => format!("{key}={MASK}"),
            _ => pair.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// True when `command` dumps the environment (`env`, `printenv`, `set`, `export`,
/// `declare` first in any segment of a pipeline or list).
pub fn is_env_dump_command(command: &str) -> bool {
    command
        .split(['|', ';', '&'])
        .filter_map(|segment| segment.split_whitespace().next())
        .any(|first| ENV_DUMP_COMMANDS.contains(&first.trim_matches(['"', '\''])))
}

/// Terminal output redacted as the reference does: assignment masking only when
/// the command is an environment dump, since other output is usually code.
pub fn redact_terminal_output(output: &str, command: Option<&str>) -> String {
    let code_file = !command.is_some_and(is_env_dump_command);
    redact_with(
        output,
        RedactOptions {
            code_file,
            url_credentials: false,
            non_reusable: false,
        },
    )
}

fn replace(
    re: &LazyLock<Option<Regex>>,
    text: &str,
    f: impl Fn(&Captures<'_>) -> String,
) -> String {
    match re.as_ref() {
        Some(re) => re.replace_all(text, |c: &Captures<'_>| f(c)).into_owned(),
        None => text.to_owned(),
    }
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Like [`replace`], but a match glued to token characters on either side is
/// left alone (the regex crate has no look-around).
fn replace_bounded(
    re: &LazyLock<Option<Regex>>,
    text: &str,
    f: impl Fn(&Captures<'_>) -> String,
) -> String {
    let Some(re) = re.as_ref() else {
        return text.to_owned();
    };
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for c in re.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        let before = text[..m.start()].chars().next_back();
        let after = text[m.end()..].chars().next();
        if before.is_some_and(is_token_char) || after.is_some_and(is_token_char) {
            continue;
        }
        out.push_str(&text[copied..m.start()]);
        out.push_str(&f(&c));
        copied = m.end();
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
