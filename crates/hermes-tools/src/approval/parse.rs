//! A shell parser for detection: enough of POSIX/bash grammar to find every
//! command a string would run — lists, pipelines, subshells and groups,
//! function definitions, redirections, heredocs — with each word kept as its
//! parts (literal text with its quoting, parameters, command and process
//! substitutions), so the expander can work out what the shell would run
//! without running anything. It never fails: unbalanced input runs to the
//! end, as a shell would keep reading.
//!
//! Deliberately ours: the shell-grammar crates reject what they cannot parse
//! (an attacker's input is exactly that), drop quoting once a word is built,
//! or execute expansions; the gate needs every command found in any input,
//! each word's quoting kept per part, and a bounded depth.

/// Longest command the parser analyses; longer input is treated as suspicious.
pub const MAX_COMMAND_LEN: usize = 64 * 1024;
/// Deepest nesting of substitutions, subshells and `-c` payloads that is followed.
pub const MAX_DEPTH: usize = 12;

pub use super::syntax::{Node, Part, Redirect, Script, Simple, Word};

/// Parses `src`.
pub fn parse(src: &str) -> Script {
    let mut p = Parser {
        chars: src.chars().collect(),
        pos: 0,
        pending_heredocs: Vec::new(),
    };
    p.script(false)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// Heredoc delimiters (and whether `<<-` strips tabs) waiting for the next newline.
    pending_heredocs: Vec<(String, bool)>,
}

/// The command being built and the pipeline around it.
#[derive(Default)]
struct Building {
    nodes: Vec<Node>,
    stages: Vec<Simple>,
    cur: Simple,
}

impl Building {
    fn end_simple(&mut self) {
        let simple = std::mem::take(&mut self.cur);
        if !simple.words.is_empty()
            || !simple.redirects.is_empty()
            || !simple.assignments.is_empty()
        {
            self.stages.push(simple);
        }
    }

    fn end_pipeline(&mut self, background: bool) {
        self.end_simple();
        if !self.stages.is_empty() {
            self.nodes.push(Node::Pipeline {
                stages: std::mem::take(&mut self.stages),
                background,
            });
        }
    }

    /// No word of the current command yet: `(` opens a subshell, `#` a comment.
    fn at_command_start(&self) -> bool {
        self.cur.words.is_empty() && self.cur.assignments.is_empty()
    }

    fn add_word(&mut self, word: Word) {
        if self.cur.words.is_empty()
            && let Some((name, value)) = assignment(&word)
        {
            self.cur.assignments.push((name, value));
            return;
        }
        if self.cur.words.is_empty()
            && word.literal().as_deref() == Some("function")
            && self.stages.is_empty()
        {
            // `function name`: the name is the next word.
            self.cur.words.push(word);
            return;
        }
        if self.cur.words.len() == 1
            && self.cur.words[0].literal().as_deref() == Some("function")
            && let Some(name) = word.literal()
        {
            self.cur.words.clear();
            self.nodes.push(Node::Function(name));
            return;
        }
        self.cur.words.push(word);
    }
}

/// `NAME=value` (a word whose literal prefix is a valid name and `=`).
pub(crate) fn assignment(word: &Word) -> Option<(String, Word)> {
    let Some(Part::Lit {
        text,
        quoted: false,
    }) = word.parts.first()
    else {
        return None;
    };
    let (name, rest) = text.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !valid {
        return None;
    }
    let mut value = Word::default();
    if !rest.is_empty() {
        value.parts.push(Part::Lit {
            text: rest.to_owned(),
            quoted: false,
        });
    }
    value.parts.extend(word.parts.iter().skip(1).cloned());
    Some((name.to_owned(), value))
}

impl Parser {
    fn peek(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    /// A list of commands up to the end, or (for a subshell) its closing `)`.
    fn script(&mut self, subshell: bool) -> Script {
        let mut b = Building::default();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek(1) == Some('\n') => self.pos += 2,
                '\n' => {
                    b.end_pipeline(false);
                    self.pos += 1;
                    self.read_heredoc_bodies(&mut b);
                }
                ';' => {
                    b.end_pipeline(false);
                    self.pos += 1;
                }
                '&' if self.peek(1) == Some('&') => {
                    b.end_pipeline(false);
                    self.pos += 2;
                }
                '&' if self.peek(1) == Some('>') => {
                    // `&>file`: stdout and stderr to a file.
                    self.pos += 1;
                    self.redirect(&mut b);
                }
                '&' => {
                    b.end_pipeline(true);
                    self.pos += 1;
                }
                '|' if self.peek(1) == Some('|') => {
                    b.end_pipeline(false);
                    self.pos += 2;
                }
                '|' => {
                    b.end_simple();
                    self.pos += if self.peek(1) == Some('&') { 2 } else { 1 };
                }
                ')' if subshell => {
                    self.pos += 1;
                    break;
                }
                // A case pattern's `)` (or a stray one) ends the command before it.
                ')' => {
                    b.end_pipeline(false);
                    self.pos += 1;
                }
                '(' if b.cur.words.len() == 1 && self.empty_parens() => {
                    // `name()`: a function definition; its body follows.
                    if let Some(name) = b.cur.words.pop().and_then(|w| w.literal()) {
                        b.nodes.push(Node::Function(name));
                    }
                    b.end_pipeline(false);
                }
                '(' if b.at_command_start() => {
                    self.pos += 1;
                    if self.peek(0) == Some('(') {
                        // `(( … ))`: arithmetic evaluation, no command runs.
                        self.pos += 1;
                        self.balanced();
                        continue;
                    }
                    let inner = self.script(true);
                    b.end_pipeline(false);
                    b.nodes.push(Node::Subshell(inner));
                }
                '#' => self.comment(),
                '<' | '>' if self.peek(1) != Some('(') => self.redirect(&mut b),
                _ => {
                    if let Some(fd_redirect) = self.fd_redirect_ahead() {
                        self.pos += fd_redirect;
                        self.redirect(&mut b);
                        continue;
                    }
                    let word = self.word();
                    b.add_word(word);
                }
            }
        }
        b.end_pipeline(false);
        Script { nodes: b.nodes }
    }

    /// `(` followed by optional blanks and `)`; consumes it when so.
    fn empty_parens(&mut self) -> bool {
        let mut i = 1;
        while matches!(self.peek(i), Some(' ' | '\t')) {
            i += 1;
        }
        if self.peek(i) == Some(')') {
            self.pos += i + 1;
            return true;
        }
        false
    }

    fn comment(&mut self) {
        while let Some(n) = self.peek(0) {
            if n == '\n' {
                break;
            }
            self.pos += 1;
        }
    }

    /// Digits directly followed by `<` or `>` (`2>`, `10<`): the length of the digits.
    fn fd_redirect_ahead(&self) -> Option<usize> {
        let mut i = 0;
        while self.peek(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        (i > 0 && matches!(self.peek(i), Some('<' | '>')) && self.peek(i + 1) != Some('('))
            .then_some(i)
    }

    /// One word, up to an unquoted blank or operator.
    fn word(&mut self) -> Word {
        let mut w = Word::default();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | ')' => break,
                // `name(`: the word ends (a function definition follows).
                '(' if !w.parts.is_empty() => break,
                '(' => {
                    // A stray `(` where a word starts: take it literally.
                    w.push_lit('(', false);
                    self.pos += 1;
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    self.pos += 2;
                    let script = self.balanced();
                    w.parts.push(Part::Process { script });
                }
                '<' | '>' => break,
                '\\' => {
                    match self.peek(1) {
                        Some('\n') => {}
                        Some(n) => w.push_lit(n, true),
                        None => {}
                    }
                    self.pos += 2;
                }
                '\'' => {
                    self.pos += 1;
                    let text = self.single_quoted();
                    w.push_str(&text, true);
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut w);
                }
                '`' => {
                    let script = self.backtick();
                    w.parts.push(Part::Command {
                        script,
                        quoted: false,
                    });
                }
                '$' => self.dollar(&mut w, false),
                _ => {
                    w.push_lit(c, false);
                    self.pos += 1;
                }
            }
        }
        w
    }

    /// What follows a `$`: a parameter, a substitution, `$'…'`, or a plain `$`.
    fn dollar(&mut self, w: &mut Word, quoted: bool) {
        match self.peek(1) {
            Some('(') if self.peek(2) == Some('(') => {
                self.pos += 3;
                self.balanced();
                // The arithmetic's second `)`.
                if self.peek(0) == Some(')') {
                    self.pos += 1;
                }
                w.parts.push(Part::Arith);
            }
            Some('(') => {
                self.pos += 2;
                let script = self.balanced();
                w.parts.push(Part::Command { script, quoted });
            }
            Some('{') => {
                self.pos += 2;
                let mut expr = String::new();
                let mut depth = 1;
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    expr.push(c);
                }
                w.parts.push(Part::Param { expr, quoted });
            }
            Some('\'') if !quoted => {
                self.pos += 2;
                let raw = self.single_quoted_escapes();
                w.push_str(&ansi_c(&raw), true);
            }
            Some(c) if c == '_' || c.is_ascii_alphabetic() => {
                self.pos += 1;
                let mut expr = String::new();
                while let Some(n) = self.peek(0) {
                    if n == '_' || n.is_ascii_alphanumeric() {
                        expr.push(n);
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                w.parts.push(Part::Param { expr, quoted });
            }
            Some(c @ ('0'..='9' | '@' | '*' | '#' | '?' | '$' | '!' | '-')) => {
                self.pos += 2;
                w.parts.push(Part::Param {
                    expr: c.to_string(),
                    quoted,
                });
            }
            _ => {
                w.push_lit('$', quoted);
                self.pos += 1;
            }
        }
    }

    /// The rest of a '…' string.
    fn single_quoted(&mut self) -> String {
        let mut out = String::new();
        while let Some(q) = self.peek(0) {
            self.pos += 1;
            if q == '\'' {
                break;
            }
            out.push(q);
        }
        out
    }

    /// The rest of a `$'…'` string, backslash escapes kept for decoding.
    fn single_quoted_escapes(&mut self) -> String {
        let mut out = String::new();
        while let Some(q) = self.peek(0) {
            self.pos += 1;
            match q {
                '\'' => break,
                '\\' => {
                    out.push('\\');
                    if let Some(n) = self.peek(0) {
                        out.push(n);
                        self.pos += 1;
                    }
                }
                _ => out.push(q),
            }
        }
        out
    }

    fn double_quoted(&mut self, w: &mut Word) {
        let start = w.parts.len();
        while let Some(q) = self.peek(0) {
            match q {
                '"' => {
                    self.pos += 1;
                    break;
                }
                '\\' => {
                    match self.peek(1) {
                        Some(n @ ('"' | '\\' | '$' | '`')) => w.push_lit(n, true),
                        Some('\n') => {}
                        Some(n) => {
                            w.push_lit('\\', true);
                            w.push_lit(n, true);
                        }
                        None => {}
                    }
                    self.pos += 2;
                }
                '`' => {
                    let script = self.backtick();
                    w.parts.push(Part::Command {
                        script,
                        quoted: true,
                    });
                }
                '$' => self.dollar(w, true),
                _ => {
                    w.push_lit(q, true);
                    self.pos += 1;
                }
            }
        }
        if w.parts.len() == start {
            w.parts.push(Part::Lit {
                text: String::new(),
                quoted: true,
            });
        }
    }

    /// Reads a backtick substitution starting at the opening backtick.
    fn backtick(&mut self) -> String {
        self.pos += 1;
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' => {
                    if let Some(n) = self.peek(0) {
                        self.pos += 1;
                        if !matches!(n, '`' | '\\' | '$') {
                            inner.push('\\');
                        }
                        inner.push(n);
                    }
                }
                _ => inner.push(c),
            }
        }
        inner
    }

    /// Reads up to the `)` matching an already-consumed `(`, respecting quotes.
    fn balanced(&mut self) -> String {
        let mut depth = 1usize;
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                '\'' => {
                    inner.push(c);
                    while let Some(q) = self.peek(0) {
                        self.pos += 1;
                        inner.push(q);
                        if q == '\'' {
                            break;
                        }
                    }
                    continue;
                }
                '"' => {
                    inner.push(c);
                    while let Some(q) = self.peek(0) {
                        self.pos += 1;
                        inner.push(q);
                        if q == '\\' {
                            if let Some(n) = self.peek(0) {
                                self.pos += 1;
                                inner.push(n);
                            }
                        } else if q == '"' {
                            break;
                        }
                    }
                    continue;
                }
                '\\' => {
                    inner.push(c);
                    if let Some(n) = self.peek(0) {
                        self.pos += 1;
                        inner.push(n);
                    }
                    continue;
                }
                _ => {}
            }
            inner.push(c);
        }
        inner
    }

    fn redirect(&mut self, b: &mut Building) {
        let mut op = String::new();
        while let Some(c) = self.peek(0) {
            if matches!(c, '<' | '>' | '&' | '|' | '-') && op.len() < 3 {
                // `-` only belongs to `<<-`; `&`/`|` only directly after `>` or `<`.
                let fits = match c {
                    '-' => op == "<<",
                    '&' | '|' => op.ends_with('>') || op == "<",
                    _ => true,
                };
                if !fits {
                    break;
                }
                op.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let target = self.word();
        if op.starts_with("<<") && op != "<<<" {
            self.pending_heredocs.push((target.text(), op == "<<-"));
        }
        b.cur.redirects.push(Redirect { op, target });
    }

    fn read_heredoc_bodies(&mut self, b: &mut Building) {
        for (delim, strip_tabs) in std::mem::take(&mut self.pending_heredocs) {
            let mut body = String::new();
            while self.pos < self.chars.len() {
                let mut line = String::new();
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    if c == '\n' {
                        break;
                    }
                    line.push(c);
                }
                let cmp = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if cmp == delim {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            let owner = b.nodes.iter_mut().rev().find_map(|n| match n {
                Node::Pipeline { stages, .. } => stages.iter_mut().rev().find(|s| {
                    s.redirects
                        .iter()
                        .any(|r| r.op.starts_with("<<") && r.op != "<<<")
                }),
                _ => None,
            });
            if let Some(owner) = owner {
                owner.heredocs.push(body);
            }
        }
    }
}

/// Decodes the escapes of a `$'…'` string (`\x72`, `\u0072`, `\162`, `\n` …).
pub fn ansi_c(raw: &str) -> String {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' || i + 1 >= chars.len() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let e = chars[i + 1];
        i += 2;
        let decoded = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            '?' => Some('?'),
            'x' => number(&chars, &mut i, 16, 2),
            'u' => number(&chars, &mut i, 16, 4),
            'U' => number(&chars, &mut i, 16, 8),
            '0'..='7' => {
                i -= 1;
                number(&chars, &mut i, 8, 3)
            }
            other => {
                out.push('\\');
                Some(other)
            }
        };
        if let Some(c) = decoded {
            out.push(c);
        }
    }
    out
}

/// Up to `max` digits in `radix` at `chars[*i..]`, as a character.
fn number(chars: &[char], i: &mut usize, radix: u32, max: usize) -> Option<char> {
    let start = *i;
    while *i < chars.len() && *i - start < max && chars[*i].is_digit(radix) {
        *i += 1;
    }
    let digits: String = chars[start..*i].iter().collect();
    u32::from_str_radix(&digits, radix)
        .ok()
        .and_then(char::from_u32)
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
