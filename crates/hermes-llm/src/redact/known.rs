//! Known secrets: the values this installation actually holds (`.env`,
//! `auth.json`, credential variables), masked wherever they appear whatever
//! their shape — as they are, and in the base64 (any byte alignment,
//! standard or URL-safe alphabet), hex and percent-encoded forms that
//! `cat .env | base64`, `xxd -p` or a URL would print.
//!
//! Patterns cannot recognise a password with no vendor prefix; a list of the
//! real values can. One Aho-Corasick automaton finds every form in one pass;
//! encoded runs that are wrapped (GNU `base64` breaks lines at 76 columns,
//! `xxd -p` at 60) are decoded and searched for the raw values.

use std::ops::Range;
use std::sync::{Arc, RwLock};

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_json::Value;

/// Shortest value treated as a secret: shorter ones are flags, ports, words.
const MIN_SECRET_LEN: usize = 8;

/// Shortest encoded run worth decoding (the base64 of [`MIN_SECRET_LEN`] bytes).
const MIN_RUN: usize = 11;

/// Line widths at which encoders wrap: GNU `base64` (76), PEM/`openssl` (64).
const BASE64_WRAPS: &[usize] = &[76, 64];

/// Line widths at which hex dumpers wrap: `xxd -p` (60), 64 and 32 columns.
const HEX_WRAPS: &[usize] = &[60, 64, 32];

/// Decoding that accepts what encoders print: padding or none, stray bits.
const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_allow_trailing_bits(true)
    .with_decode_padding_mode(DecodePaddingMode::Indifferent);
const STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);

/// How one form of a secret is spelled, which decides how far a match is widened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spelling {
    /// The value itself.
    Exact,
    /// Base64 of it: the whole surrounding base64 run is masked.
    Base64,
    /// Hex of it: the whole surrounding hex run is masked.
    Hex,
    /// Percent-encoded.
    Percent,
}

/// The secrets one installation holds, with every spelling searched for.
#[derive(Debug, Default)]
pub struct KnownSecrets {
    /// The values, longest first.
    secrets: Vec<String>,
    /// Every form of every secret, with how it is spelled and whose it is.
    forms: Vec<(String, Spelling, usize)>,
    /// Finds [`KnownSecrets::forms`].
    matcher: Option<AhoCorasick>,
    /// Finds the raw values inside decoded text.
    raw: Option<AhoCorasick>,
    /// Forms holding whitespace or non-ASCII, which a stream's run rule does not hold.
    unusual: Vec<usize>,
    /// Length in bytes of the longest form.
    longest: usize,
}

impl KnownSecrets {
    /// The values that [`could_be_secret`] accepts, with their encoded forms.
    pub fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut secrets: Vec<String> = values
            .into_iter()
            .map(|v| v.as_ref().trim().to_owned())
            .filter(|v| could_be_secret(v))
            .collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        let mut forms = Vec::new();
        for (i, secret) in secrets.iter().enumerate() {
            for (form, spelling) in spellings(secret) {
                if form.len() >= MIN_SECRET_LEN && !forms.iter().any(|(f, _, _)| *f == form) {
                    forms.push((form, spelling, i));
                }
            }
        }
        let build = |patterns: Vec<&str>| {
            (!patterns.is_empty())
                .then(|| {
                    AhoCorasick::builder()
                        .match_kind(MatchKind::LeftmostLongest)
                        .build(patterns)
                        .ok()
                })
                .flatten()
        };
        let matcher = build(forms.iter().map(|(f, _, _)| f.as_str()).collect());
        let raw = build(secrets.iter().map(String::as_str).collect());
        let unusual = forms
            .iter()
            .enumerate()
            .filter(|(_, (f, _, _))| f.bytes().any(|b| !b.is_ascii_graphic()))
            .map(|(i, _)| i)
            .collect();
        let longest = forms.iter().map(|(f, _, _)| f.len()).max().unwrap_or(0);
        Self {
            secrets,
            forms,
            matcher,
            raw,
            unusual,
            longest,
        }
    }

    /// Secrets from the sources of one installation: `.env` assignments
    /// (`(name, value)`, configuration-named ones skipped, see
    /// [`is_config_name`]), credential values known by name, and the
    /// credential fields of an `auth.json` document.
    pub fn from_sources<'a>(
        dotenv: impl IntoIterator<Item = (&'a str, &'a str)>,
        credentials: impl IntoIterator<Item = &'a str>,
        auth_json: Option<&Value>,
    ) -> Self {
        let mut values: Vec<String> = dotenv
            .into_iter()
            .filter(|(name, _)| !is_config_name(name))
            .map(|(_, value)| value.to_owned())
            .collect();
        values.extend(credentials.into_iter().map(str::to_owned));
        if let Some(doc) = auth_json {
            collect_auth_secrets(doc, None, &mut values);
        }
        Self::new(values)
    }

    /// Whether there is nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// How many secrets are known.
    pub fn len(&self) -> usize {
        self.secrets.len()
    }

    /// Length in bytes of the longest form searched for.
    pub fn longest_form(&self) -> usize {
        self.longest
    }

    /// `text` with every known secret in any spelling replaced; `None` when
    /// nothing was found. `exact` masks the value itself, `encoded` a whole
    /// encoded run.
    pub(crate) fn mask(
        &self,
        text: &str,
        exact: &dyn Fn(&str) -> String,
        encoded: &str,
    ) -> Option<String> {
        let matcher = self.matcher.as_ref()?;
        let mut hits: Vec<(Range<usize>, Option<usize>)> = Vec::new();
        for m in matcher.find_iter(text) {
            let (_, spelling, owner) = &self.forms[m.pattern().as_usize()];
            let hit = match spelling {
                Spelling::Exact => (m.range(), Some(*owner)),
                Spelling::Base64 => (widen(text, m.range(), is_base64_byte), None),
                Spelling::Hex => (widen(text, m.range(), |b| b.is_ascii_hexdigit()), None),
                Spelling::Percent => (m.range(), None),
            };
            hits.push(hit);
        }
        hits.extend(self.decoded_runs(text).into_iter().map(|r| (r, None)));
        if hits.is_empty() {
            return None;
        }
        hits.sort_by_key(|(r, _)| (r.start, std::cmp::Reverse(r.end)));
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for (range, owner) in hits {
            if range.start < copied {
                // Inside a run already masked; a longer overlap extends it.
                copied = copied.max(range.end);
                continue;
            }
            out.push_str(&text[copied..range.start]);
            match owner {
                Some(i) => out.push_str(&exact(&self.secrets[i])),
                None => out.push_str(encoded),
            }
            copied = range.end;
        }
        out.push_str(&text[copied..]);
        Some(out)
    }

    /// Encoded runs of `text` (base64, hex, percent-encoding; wrapped lines
    /// joined) whose decoded bytes contain a known secret.
    fn decoded_runs(&self, text: &str) -> Vec<Range<usize>> {
        let Some(raw) = self.raw.as_ref() else {
            return Vec::new();
        };
        let mut found = Vec::new();
        let bytes = text.as_bytes();
        for run in runs(bytes, is_base64_byte, BASE64_WRAPS) {
            if decode_base64(&bytes[run.clone()]).is_some_and(|d| raw.is_match(&d)) {
                found.push(run);
            }
        }
        for run in runs(bytes, |b| b.is_ascii_hexdigit(), HEX_WRAPS) {
            if raw.is_match(&decode_hex(&bytes[run.clone()])) {
                found.push(run);
            }
        }
        if text.contains('%') {
            for run in runs(bytes, |b| b.is_ascii_graphic(), &[]) {
                let piece = &bytes[run.clone()];
                if piece.contains(&b'%') && raw.is_match(&percent_decode(piece)) {
                    found.push(run);
                }
            }
        }
        found
    }

    /// Where a form found in `text` that begins before `cut` and ends after
    /// it begins (a cut there would split it); `cut` when none does.
    pub(crate) fn straddled(&self, text: &str, mut cut: usize) -> usize {
        let Some(matcher) = self.matcher.as_ref() else {
            return cut;
        };
        for _ in 0..4 {
            let mut lo = cut.saturating_sub(self.longest);
            while !text.is_char_boundary(lo) {
                lo -= 1;
            }
            let before = cut;
            for m in matcher.find_iter(&text[lo..]) {
                let (start, end) = (lo + m.start(), lo + m.end());
                if start < cut && end > cut {
                    cut = start;
                    break;
                }
            }
            if cut == before {
                break;
            }
        }
        cut
    }

    /// Length of the longest end of `text` that begins a form but does not
    /// complete it, among the forms a run of ASCII graphic characters cannot
    /// hold (`all`: among every form).
    pub(crate) fn partial_suffix(&self, text: &str, all: bool) -> usize {
        let bytes = text.as_bytes();
        let Some(&last) = bytes.last() else {
            return 0;
        };
        let check = |form: &[u8], best: &mut usize| {
            let limit = form.len().saturating_sub(1).min(bytes.len());
            for k in (*best + 1..=limit).rev() {
                if form[k - 1] == last && bytes.ends_with(&form[..k]) {
                    *best = k;
                    return;
                }
            }
        };
        let mut best = 0;
        if all {
            for (form, _, _) in &self.forms {
                check(form.as_bytes(), &mut best);
            }
        } else {
            for &i in &self.unusual {
                check(self.forms[i].0.as_bytes(), &mut best);
            }
        }
        best
    }
}

/// Whether a value can be a secret at all: not too short, not a number, a
/// boolean, a plain web address or an absolute path (configuration values
/// such as a base URL stay readable in error messages).
pub fn could_be_secret(value: &str) -> bool {
    let value = value.trim();
    if value.chars().count() < MIN_SECRET_LEN || value.parse::<f64>().is_ok() {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "none"
    ) {
        return false;
    }
    if let Some(rest) = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        return authority.contains('@');
    }
    !(value.starts_with('/') || value.starts_with("~/"))
}

/// Words in a variable name that make its value a credential.
const CREDENTIAL_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "PWD",
    "CREDENTIAL",
    "AUTH",
    "PRIVATE",
    "SIGNATURE",
    "SALT",
    "COOKIE",
    "SESSION",
    "DSN",
    "WEBHOOK",
];

/// Name endings of configuration, not credentials (`OPENAI_BASE_URL`,
/// `HERMES_MODEL`, `TELEGRAM_ALLOWED_USERS` …).
const CONFIG_SUFFIXES: &[&str] = &[
    "URL", "HOST", "PORT", "DIR", "PATH", "HOME", "MODEL", "PROVIDER", "MODE", "LEVEL", "TIMEOUT",
    "ENABLED", "ENV", "BACKEND", "REGION", "USERS", "USER", "NAME", "LANG", "LOCALE", "TZ",
    "FORMAT", "VERSION", "SIZE", "LIMIT", "CHANNEL", "CHANNELS", "ID", "IDS", "TYPE", "SHELL",
    "TERM", "EDITOR", "DEBUG", "VERBOSE", "TOOLSETS",
];

/// Whether a `.env` variable is configuration rather than a credential: its
/// name has no credential word and ends like a setting.
pub fn is_config_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(['_', '-', '.'])
        .filter(|w| !w.is_empty())
        .collect();
    if words
        .iter()
        .any(|w| CREDENTIAL_WORDS.iter().any(|c| w.contains(c)))
    {
        return false;
    }
    words.last().is_some_and(|w| CONFIG_SUFFIXES.contains(w))
}

/// Collects the credential fields of an `auth.json` document: string values
/// under a key naming a token, key, secret or password.
fn collect_auth_secrets(value: &Value, key: Option<&str>, out: &mut Vec<String>) {
    match value {
        Value::String(s) if key.is_some_and(is_credential_field) => out.push(s.clone()),
        Value::Array(items) => {
            for item in items {
                collect_auth_secrets(item, key, out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                collect_auth_secrets(v, Some(k), out);
            }
        }
        _ => {}
    }
}

/// `access_token`, `api_key`, `client_secret` …, not `token_type` or `expires_at`.
fn is_credential_field(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let named = ["token", "key", "secret", "password"]
        .iter()
        .any(|w| key.contains(w));
    let metadata = [
        "_at", "_type", "_url", "_in", "_id", "expires", "label", "env",
    ]
    .iter()
    .any(|w| key.ends_with(w));
    named && !metadata
}

/// Every spelling of `secret` searched for.
fn spellings(secret: &str) -> Vec<(String, Spelling)> {
    let bytes = secret.as_bytes();
    let mut out = vec![(secret.to_owned(), Spelling::Exact)];
    for engine in [&STANDARD, &URL_SAFE] {
        for align in 0..3 {
            out.push((aligned_base64(engine, bytes, align), Spelling::Base64));
        }
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    out.push((hex.to_ascii_uppercase(), Spelling::Hex));
    out.push((hex, Spelling::Hex));
    let percent = percent_encode(bytes);
    if percent != secret {
        out.push((percent.to_ascii_lowercase(), Spelling::Percent));
        out.push((percent, Spelling::Percent));
    }
    out
}

/// The base64 characters that depend on `bytes` alone when they follow
/// `align` other bytes: what appears inside any encoding of a text holding them.
fn aligned_base64(engine: &GeneralPurpose, bytes: &[u8], align: usize) -> String {
    let mut padded = vec![0u8; align];
    padded.extend_from_slice(bytes);
    let encoded = engine.encode(&padded);
    let first = (8 * align).div_ceil(6);
    let last = (8 * (align + bytes.len())) / 6;
    encoded
        .get(first..last.min(encoded.len()))
        .unwrap_or_default()
        .to_owned()
}

/// Percent-encoding of everything outside the unreserved set, upper-case hex.
fn percent_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let value = hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0);
                out.push(u8::try_from(value).unwrap_or(0));
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

fn is_base64_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
}

/// `range` grown to the run of `class` bytes around it (and base64 padding).
fn widen(text: &str, range: Range<usize>, class: fn(u8) -> bool) -> Range<usize> {
    let bytes = text.as_bytes();
    let mut start = range.start;
    while start > 0 && class(bytes[start - 1]) {
        start -= 1;
    }
    let mut end = range.end;
    while end < bytes.len() && (class(bytes[end]) || bytes[end] == b'=') {
        end += 1;
    }
    start..end
}

/// Maximal runs of `class` bytes at least [`MIN_RUN`] long; a line break
/// after a line exactly as wide as one of `wraps` (the same width throughout)
/// continues the run. Trailing `=` padding belongs to the run.
fn runs(bytes: &[u8], class: impl Fn(u8) -> bool, wraps: &[usize]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !class(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut line_start = i;
        let mut width = None;
        loop {
            while i < bytes.len() && class(bytes[i]) {
                i += 1;
            }
            let line = i - line_start;
            let newline = match &bytes[i..] {
                [b'\n', ..] => 1,
                [b'\r', b'\n', ..] => 2,
                _ => 0,
            };
            let wraps_here = newline > 0
                && wraps.contains(&line)
                && width.is_none_or(|w| w == line)
                && bytes.get(i + newline).is_some_and(|&b| class(b));
            if !wraps_here {
                break;
            }
            width = Some(line);
            i += newline;
            line_start = i;
        }
        let padding = bytes[i..]
            .iter()
            .take(2)
            .take_while(|&&b| b == b'=')
            .count();
        i += padding;
        if i - start >= MIN_RUN {
            out.push(start..i);
        }
    }
    out
}

/// The bytes a base64 run (possibly wrapped, either alphabet) decodes to.
fn decode_base64(run: &[u8]) -> Option<Vec<u8>> {
    let mut clean: Vec<u8> = run
        .iter()
        .copied()
        .filter(|b| !matches!(b, b'\n' | b'\r' | b'='))
        .collect();
    if clean.len() % 4 == 1 {
        clean.pop();
    }
    let url = clean.iter().any(|b| matches!(b, b'-' | b'_'));
    let std = clean.iter().any(|b| matches!(b, b'+' | b'/'));
    match (url, std) {
        (true, true) => None,
        (true, false) => URL_SAFE.decode(&clean).ok(),
        (false, _) => STANDARD.decode(&clean).ok(),
    }
}

/// The bytes a hex run (possibly wrapped) decodes to.
fn decode_hex(run: &[u8]) -> Vec<u8> {
    let digits: Vec<u32> = run
        .iter()
        .filter_map(|&b| char::from(b).to_digit(16))
        .collect();
    digits
        .chunks_exact(2)
        .map(|p| u8::try_from(p[0] * 16 + p[1]).unwrap_or(0))
        .collect()
}

/// The process's known secrets. Redaction is cross-cutting: the free
/// functions of this module are called from every crate (errors, logs, tool
/// results, stores, front-ends), and threading a registry through each call
/// site would touch them all for one value that never changes after start-up.
/// So the composition root (the binary, once `.env` is loaded) installs it
/// here once; tests pass a [`KnownSecrets`] explicitly instead
/// ([`super::redact_with_known`], [`super::StreamRedactor::with_known`]).
static INSTALLED: RwLock<Option<Arc<KnownSecrets>>> = RwLock::new(None);

/// Makes `known` the process's known secrets (replacing any before).
pub fn install_known_secrets(known: KnownSecrets) {
    let known = Arc::new(known);
    match INSTALLED.write() {
        Ok(mut slot) => *slot = Some(known),
        Err(poisoned) => *poisoned.into_inner() = Some(known),
    }
}

/// The process's known secrets, if the composition root installed any.
pub fn installed_known_secrets() -> Option<Arc<KnownSecrets>> {
    match INSTALLED.read() {
        Ok(slot) => slot.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

#[cfg(test)]
#[path = "known_tests.rs"]
mod tests;
