//! What a word becomes when the shell runs it, worked out without running
//! anything: brace and tilde expansion, parameters the same command line
//! assigned (`X=rm; $X …`), `$IFS` splitting, `$'…'`, and the output of
//! trivial command substitutions (`$(echo rm)`, `` `printf …` ``, a literal
//! piped through `base64 -d` or `rev`). Whatever cannot be known is marked
//! uncertain, and the detector never calls an uncertain command word safe.

use std::collections::HashMap;

use super::parse::{Node, Part, Script, Word, parse};

/// Most words one brace expansion may produce before the rest are dropped.
const MAX_BRACE_WORDS: usize = 64;

/// A variable's value as far as the analysis knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// Assigned a value that could be worked out.
    Known(String),
    /// Assigned something that could not (or one of several values).
    Unknown,
}

/// What the analysis knows at a point of the script.
#[derive(Debug, Clone, Default)]
pub(crate) struct Env {
    /// Variables assigned earlier in the script.
    pub(crate) vars: HashMap<String, Value>,
    /// The user's home directory, when resolved.
    pub(crate) home: Option<String>,
    /// The working directory after `cd`, when it is known.
    pub(crate) cwd: Option<String>,
    /// `set -- …` positional parameters.
    pub(crate) positional: Option<Vec<String>>,
    /// `alias name=…` definitions.
    pub(crate) aliases: HashMap<String, String>,
    /// The machine the command runs on, when the gate may look at it.
    pub(crate) host: Option<std::sync::Arc<super::Host>>,
}

impl Env {
    /// The field separators in force (`$IFS`, default blank, tab, newline).
    fn ifs(&self) -> String {
        match self.vars.get("IFS") {
            Some(Value::Known(v)) => v.clone(),
            _ => " \t\n".to_owned(),
        }
    }

    /// The value of `name`: `None` when it cannot be known.
    pub(crate) fn lookup(&self, name: &str) -> Option<String> {
        match self.vars.get(name) {
            Some(Value::Known(v)) => return Some(v.clone()),
            Some(Value::Unknown) => return None,
            None => {}
        }
        match name {
            "HOME" => Some(self.home.clone().unwrap_or_else(|| "~".to_owned())),
            "IFS" => Some(self.ifs()),
            "PWD" => self.cwd.clone(),
            _ => None,
        }
    }
}

/// One word after expansion.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Field {
    /// Its text (unknown pieces are left out).
    pub(crate) text: String,
    /// Every piece of it could be worked out.
    pub(crate) certain: bool,
    /// It has unquoted glob characters (`*`, `?`, `[`).
    pub(crate) glob: bool,
    /// It names the output of a process substitution: the inner script.
    pub(crate) process: Option<String>,
    /// The word it came from, as written (quotes removed), for messages and
    /// for patterns that look at unexpanded text (`kill $(pgrep …)`).
    pub(crate) source: String,
}

/// A piece of a word after parameter and command expansion.
struct Segment {
    text: String,
    /// Came from quotes, or is literal text (not split).
    protected: bool,
    /// Literal text that was written unquoted (globs count).
    bare_literal: bool,
    certain: bool,
    process: Option<String>,
}

/// The fields `word` expands to.
pub(crate) fn expand(word: &Word, env: &Env, depth: usize) -> Vec<Field> {
    let source = word.text();
    // `"$@"` is one field per positional parameter, quoted or not.
    if let [Part::Param { expr, .. }] = word.parts.as_slice()
        && expr == "@"
        && let Some(positional) = &env.positional
    {
        return positional
            .iter()
            .map(|p| Field {
                text: p.clone(),
                certain: true,
                source: source.clone(),
                ..Field::default()
            })
            .collect();
    }
    let mut fields: Vec<Field> = brace_expand(word)
        .iter()
        .flat_map(|w| expand_one(w, env, depth, true))
        .collect();
    for f in &mut fields {
        f.source.clone_from(&source);
    }
    fields
}

/// A word expanded without splitting or brace expansion (an assignment's
/// value); `None` when some part cannot be known.
pub(crate) fn expand_unsplit(word: &Word, env: &Env, depth: usize) -> Option<String> {
    let fields = expand_one(word, env, depth, false);
    fields
        .iter()
        .all(|f| f.certain)
        .then(|| fields.iter().map(|f| f.text.as_str()).collect())
}

/// The fields of several words, in order.
pub(crate) fn expand_all(words: &[Word], env: &Env, depth: usize) -> Vec<Field> {
    words.iter().flat_map(|w| expand(w, env, depth)).collect()
}

fn expand_one(word: &Word, env: &Env, depth: usize, split: bool) -> Vec<Field> {
    let mut segments = Vec::with_capacity(word.parts.len());
    for (i, part) in word.parts.iter().enumerate() {
        match part {
            Part::Lit { text, quoted } => {
                let mut text = text.clone();
                if i == 0 && !quoted {
                    text = tilde(&text, env);
                }
                segments.push(Segment {
                    text,
                    protected: true,
                    bare_literal: !quoted,
                    certain: true,
                    process: None,
                });
            }
            Part::Param { expr, quoted } => {
                let value = parameter(expr, env, depth);
                segments.push(Segment {
                    certain: value.is_some(),
                    text: value.unwrap_or_default(),
                    protected: *quoted,
                    bare_literal: false,
                    process: None,
                });
            }
            Part::Command { script, quoted } => {
                let value = static_output(script, env, depth + 1);
                segments.push(Segment {
                    certain: value.is_some(),
                    text: value.unwrap_or_default(),
                    protected: *quoted,
                    bare_literal: false,
                    process: None,
                });
            }
            Part::Arith => segments.push(Segment {
                text: String::new(),
                protected: true,
                bare_literal: false,
                certain: false,
                process: None,
            }),
            Part::Process { script } => segments.push(Segment {
                text: "/dev/fd/63".to_owned(),
                protected: true,
                bare_literal: false,
                certain: true,
                process: Some(script.clone()),
            }),
        }
    }
    let ifs = if split { env.ifs() } else { String::new() };
    split_fields(segments, &ifs)
}

/// Joins segments into fields, splitting unprotected expansion results on `ifs`.
fn split_fields(segments: Vec<Segment>, ifs: &str) -> Vec<Field> {
    let mut fields: Vec<Field> = Vec::new();
    let mut cur = Field {
        certain: true,
        ..Field::default()
    };
    // Whether `cur` has begun (an empty quoted string still makes a field).
    let mut started = false;
    for seg in segments {
        cur.certain &= seg.certain;
        if seg.process.is_some() {
            cur.process = seg.process.clone();
        }
        if seg.protected {
            if seg.bare_literal && seg.text.contains(['*', '?', '[']) {
                cur.glob = true;
            }
            cur.text.push_str(&seg.text);
            started = true;
            continue;
        }
        for c in seg.text.chars() {
            if ifs.contains(c) {
                if started {
                    let certain = cur.certain;
                    fields.push(std::mem::replace(
                        &mut cur,
                        Field {
                            certain,
                            ..Field::default()
                        },
                    ));
                    started = false;
                }
            } else {
                if matches!(c, '*' | '?' | '[') {
                    cur.glob = true;
                }
                cur.text.push(c);
                started = true;
            }
        }
        if !seg.certain {
            // An unknown expansion may have produced text here.
            started = true;
        }
    }
    if started {
        fields.push(cur);
    }
    fields
}

/// `~` and `~/…` at the start of a word.
fn tilde(text: &str, env: &Env) -> String {
    let home = env.home.clone().unwrap_or_else(|| "~".to_owned());
    if text == "~" {
        home
    } else if let Some(rest) = text.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else {
        text.to_owned()
    }
}

/// The value of `${expr}`, or `None` when it cannot be known.
fn parameter(expr: &str, env: &Env, depth: usize) -> Option<String> {
    match expr {
        "@" | "*" => return env.positional.as_ref().map(|p| p.join(" ")),
        "#" | "?" | "$" | "!" | "-" | "0" => return None,
        _ => {}
    }
    if let Some(n) = expr.parse::<usize>().ok().filter(|n| *n > 0) {
        return env.positional.as_ref()?.get(n - 1).cloned();
    }
    if expr.starts_with('#') || expr.starts_with('!') {
        return None;
    }
    let name_len = expr
        .find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
        .unwrap_or(expr.len());
    let (name, op) = expr.split_at(name_len);
    if name.is_empty() {
        return None;
    }
    let value = env.lookup(name);
    if op.is_empty() {
        return value;
    }
    let literal = |text: &str| -> Option<String> {
        let script = parse(&format!("echo {text}"));
        static_output_of_script(&script, env, depth + 1)
            .map(|s| s.trim_end_matches('\n').to_owned())
    };
    let op_char = |prefix: &str| op.strip_prefix(prefix);
    if let Some(rest) = op_char(":-")
        .or_else(|| op_char(":="))
        .or_else(|| op_char("-"))
        .or_else(|| op_char("="))
    {
        // A default: the value when set, else the default.
        return match value {
            Some(v) if !v.is_empty() || !op.starts_with(':') => Some(v),
            _ => literal(rest),
        };
    }
    if op.starts_with(":?") || op.starts_with('?') {
        return value;
    }
    if op.starts_with(":+") || op.starts_with('+') {
        return None;
    }
    let value = value?;
    if let Some(rest) = op.strip_prefix("##").or_else(|| op.strip_prefix('#')) {
        return Some(value.strip_prefix(rest).unwrap_or(&value).to_owned());
    }
    if let Some(rest) = op.strip_prefix("%%").or_else(|| op.strip_prefix('%')) {
        return Some(value.strip_suffix(rest).unwrap_or(&value).to_owned());
    }
    if let Some(rest) = op.strip_prefix("//").or_else(|| op.strip_prefix('/')) {
        let (from, to) = rest.split_once('/').unwrap_or((rest, ""));
        return Some(if op.starts_with("//") {
            value.replace(from, to)
        } else {
            value.replacen(from, to, 1)
        });
    }
    if let Some(rest) = op.strip_prefix(':') {
        let mut nums = rest.splitn(2, ':').map(|n| n.trim().parse::<usize>());
        let start = nums.next()?.ok()?;
        let chars: Vec<char> = value.chars().collect();
        let start = start.min(chars.len());
        let end = match nums.next() {
            Some(len) => (start + len.ok()?).min(chars.len()),
            None => chars.len(),
        };
        return Some(chars[start..end].iter().collect());
    }
    None
}

/// Brace expansion (`{a,b}`, `{1..3}`, `x{a,b}y`) of a word's unquoted text.
fn brace_expand(word: &Word) -> Vec<Word> {
    let mut out = vec![Word::default()];
    for part in &word.parts {
        let alternatives: Vec<Vec<Part>> = match part {
            Part::Lit {
                text,
                quoted: false,
            } if text.contains('{') => braces(text)
                .into_iter()
                .map(|t| {
                    vec![Part::Lit {
                        text: t,
                        quoted: false,
                    }]
                })
                .collect(),
            other => vec![vec![other.clone()]],
        };
        let mut next = Vec::new();
        for prefix in &out {
            for alt in &alternatives {
                if next.len() >= MAX_BRACE_WORDS {
                    break;
                }
                let mut w = prefix.clone();
                w.parts.extend(alt.iter().cloned());
                next.push(w);
            }
        }
        out = next;
    }
    out
}

/// The expansions of the first brace group in `text` (recursively), or `text` itself.
fn braces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let Some(open) = chars.iter().position(|c| *c == '{') else {
        return vec![text.to_owned()];
    };
    let mut depth = 0;
    let mut close = None;
    let mut commas = Vec::new();
    for (i, c) in chars.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            ',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    let Some(close) = close else {
        return vec![text.to_owned()];
    };
    let prefix: String = chars[..open].iter().collect();
    let suffix: String = chars[close + 1..].iter().collect();
    let inner: String = chars[open + 1..close].iter().collect();
    let items: Vec<String> = if commas.is_empty() {
        match sequence(&inner) {
            Some(items) => items,
            // `{}` or `{x}`: literal braces; expand what follows.
            None => {
                return braces(&suffix)
                    .into_iter()
                    .map(|s| format!("{prefix}{{{inner}}}{s}"))
                    .collect();
            }
        }
    } else {
        let mut items = Vec::new();
        let mut start = open + 1;
        for &comma in commas.iter().chain(std::iter::once(&close)) {
            items.push(chars[start..comma].iter().collect());
            start = comma + 1;
        }
        items
    };
    let mut out = Vec::new();
    for item in items {
        for tail in braces(&format!("{item}{suffix}")) {
            if out.len() >= MAX_BRACE_WORDS {
                return out;
            }
            out.push(format!("{prefix}{tail}"));
        }
    }
    out
}

/// `a..e` or `1..3`: the sequence, when `inner` is one.
fn sequence(inner: &str) -> Option<Vec<String>> {
    let (a, b) = inner.split_once("..")?;
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        let range: Vec<i64> = if x <= y {
            (x..=y).collect()
        } else {
            (y..=x).rev().collect()
        };
        return Some(
            range
                .into_iter()
                .take(MAX_BRACE_WORDS)
                .map(|n| n.to_string())
                .collect(),
        );
    }
    let (mut x, mut y) = (a.chars(), b.chars());
    let (Some(x), None, Some(y), None) = (x.next(), x.next(), y.next(), y.next()) else {
        return None;
    };
    let (lo, hi) = if x <= y { (x, y) } else { (y, x) };
    Some((lo..=hi).take(MAX_BRACE_WORDS).map(String::from).collect())
}

/// What `script` prints, when it is a literal producer (`echo`, `printf`)
/// optionally piped through decoders (`base64 -d`, `rev`, `xxd -r -p`, `cat`).
pub(crate) fn static_output(script: &str, env: &Env, depth: usize) -> Option<String> {
    if depth > super::parse::MAX_DEPTH {
        return None;
    }
    static_output_of_script(&parse(script), env, depth).map(|s| s.trim_end_matches('\n').to_owned())
}

pub(crate) fn static_output_of_script(script: &Script, env: &Env, depth: usize) -> Option<String> {
    let [Node::Pipeline { stages, .. }] = script.nodes.as_slice() else {
        return None;
    };
    let mut output: Option<String> = None;
    for stage in stages {
        let fields = expand_all(&stage.words, env, depth);
        if fields.iter().any(|f| !f.certain) {
            return None;
        }
        let argv: Vec<&str> = fields.iter().map(|f| f.text.as_str()).collect();
        let here = stage
            .redirects
            .iter()
            .find(|r| r.op == "<<<")
            .and_then(|r| r.target.literal().map(|t| format!("{t}\n")));
        let input = output.take().or(here);
        output = Some(match (argv.first().copied(), input) {
            (Some("echo"), None) => echo(&argv[1..]),
            (Some("printf"), None) => printf(&argv[1..])?,
            (Some("cat"), Some(text)) if argv.len() == 1 => text,
            (Some("cat"), None) if argv.len() == 2 => super::scripts::host_text(argv[1], env)?,
            (Some("rev"), Some(text)) => text
                .lines()
                .map(|l| l.chars().rev().collect::<String>() + "\n")
                .collect(),
            (Some("base64"), Some(text))
                if argv.iter().any(|a| matches!(*a, "-d" | "--decode" | "-D")) =>
            {
                String::from_utf8(base64_decode(&text)?).ok()?
            }
            (Some("xxd"), Some(text)) if argv.contains(&"-r") && argv.contains(&"-p") => {
                String::from_utf8(hex_decode(&text)?).ok()?
            }
            _ => return None,
        });
    }
    output
}

/// `echo [-n] [-e] args…`.
fn echo(args: &[&str]) -> String {
    let mut newline = true;
    let mut escapes = false;
    let mut rest = args;
    while let Some(flag) = rest.first().filter(|a| {
        a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
    }) {
        newline &= !flag.contains('n');
        escapes = flag.contains('e');
        rest = &rest[1..];
    }
    let joined = rest.join(" ");
    let mut out = if escapes {
        super::parse::ansi_c(&joined)
    } else {
        joined
    };
    if newline {
        out.push('\n');
    }
    out
}

/// `printf FORMAT args…` for `%s`, `%b`, `%d`, `%c`, `%%` and backslash escapes.
fn printf(args: &[&str]) -> Option<String> {
    let (format, mut args) = args.split_first()?;
    let format = super::parse::ansi_c(format);
    let mut out = String::new();
    loop {
        let mut chars = format.chars().peekable();
        let mut used = false;
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some(spec @ ('s' | 'b' | 'd' | 'c' | 'q')) => {
                    let arg = args.first().copied().unwrap_or("");
                    args = args.get(1..).unwrap_or(&[]);
                    used = true;
                    match spec {
                        'b' => out.push_str(&super::parse::ansi_c(arg)),
                        'c' => out.extend(arg.chars().next()),
                        _ => out.push_str(arg),
                    }
                }
                _ => return None,
            }
        }
        if args.is_empty() || !used {
            return Some(out);
        }
    }
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut bits = 0u32;
    let mut nbits = 0;
    let mut out = Vec::new();
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b'\n' | b'\r' | b' ' => continue,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    Some(out)
}

fn hex_decode(text: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| {
            let s = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(s, 16).ok()
        })
        .collect()
}

#[cfg(test)]
#[path = "expand_tests.rs"]
mod tests;
