//! A small shell-word splitter: enough of POSIX shell grammar to find every
//! command a string would run (separators, pipelines, quoting, `$(…)`,
//! backticks, subshells, redirections, heredocs), without executing anything.

/// Longest command the parser analyses; longer input is treated as suspicious.
pub const MAX_COMMAND_LEN: usize = 64 * 1024;
/// Deepest nesting of `$(…)`, backticks and `-c` payloads that is followed.
pub const MAX_DEPTH: usize = 12;

/// One redirection: its operator (`>`, `>>`, `<`, `<<`, …) and target word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The operator without any leading file-descriptor number.
    pub op: String,
    /// The target word with quotes removed (the delimiter for heredocs).
    pub target: String,
}

/// One simple command: its words (quotes removed) and redirections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Simple {
    /// The words, quote-removed; substitutions stay as their raw text.
    pub words: Vec<String>,
    /// Redirections in source order.
    pub redirects: Vec<Redirect>,
    /// Bodies of heredocs attached to this command.
    pub heredocs: Vec<String>,
}

/// A parsed script: pipelines of simple commands plus nested scripts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Pipelines in order; each is one or more stages joined by `|`.
    pub pipelines: Vec<Vec<Simple>>,
    /// Inner scripts from `$(…)`, backticks, `<(…)` and `( … )` subshells.
    pub nested: Vec<String>,
}

/// Splits `src` into pipelines and nested scripts. Never fails: unbalanced
/// quotes or parentheses run to the end of the input, as a shell would keep reading.
pub fn parse(src: &str) -> Parsed {
    let mut p = Parser {
        chars: src.chars().collect(),
        pos: 0,
        out: Parsed::default(),
        pipeline: Vec::new(),
        cur: Simple::default(),
        word: String::new(),
        in_word: false,
        pending_heredocs: Vec::new(),
    };
    p.run();
    p.out
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    out: Parsed,
    pipeline: Vec<Simple>,
    cur: Simple,
    word: String,
    in_word: bool,
    /// Heredoc delimiters (and whether `<<-` strips tabs) waiting for the next newline.
    pending_heredocs: Vec<(String, bool)>,
}

impl Parser {
    fn peek(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => {
                    match self.peek(1) {
                        // A line continuation joins the lines.
                        Some('\n') => {}
                        Some(n) => {
                            self.word.push(n);
                            self.in_word = true;
                        }
                        None => {}
                    }
                    self.pos += 2;
                }
                '\'' => {
                    self.pos += 1;
                    self.in_word = true;
                    self.single_quoted();
                }
                '"' => {
                    self.pos += 1;
                    self.in_word = true;
                    self.double_quoted();
                }
                '`' => {
                    let inner = self.backtick();
                    self.word.push('`');
                    self.word.push_str(&inner);
                    self.word.push('`');
                    self.in_word = true;
                    self.out.nested.push(inner);
                }
                '$' if self.peek(1) == Some('(') => {
                    self.pos += 2;
                    let inner = self.balanced();
                    self.word.push_str("$(");
                    self.word.push_str(&inner);
                    self.word.push(')');
                    self.in_word = true;
                    self.out.nested.push(inner);
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    // Process substitution: the word names a pipe fed by the inner script.
                    self.pos += 2;
                    let inner = self.balanced();
                    self.word.push(c);
                    self.word.push('(');
                    self.word.push_str(&inner);
                    self.word.push(')');
                    self.in_word = true;
                    self.out.nested.push(inner);
                }
                '<' | '>' => self.redirect(),
                '(' if !self.in_word => {
                    self.pos += 1;
                    let inner = self.balanced();
                    self.out.nested.push(inner);
                }
                '(' | ')' => {
                    self.end_word();
                    self.pos += 1;
                }
                '#' if !self.in_word => {
                    while let Some(n) = self.peek(0) {
                        if n == '\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                ' ' | '\t' | '\r' => {
                    self.end_word();
                    self.pos += 1;
                }
                '\n' => {
                    self.end_pipeline();
                    self.pos += 1;
                    self.read_heredoc_bodies();
                }
                ';' => {
                    self.end_pipeline();
                    self.pos += 1;
                }
                '&' => {
                    if self.peek(1) == Some('>') {
                        // `&>file`: stdout and stderr to a file.
                        self.end_word();
                        self.pos += 1;
                        self.redirect();
                    } else {
                        self.end_pipeline();
                        self.pos += if self.peek(1) == Some('&') { 2 } else { 1 };
                    }
                }
                '|' => {
                    if self.peek(1) == Some('|') {
                        self.end_pipeline();
                        self.pos += 2;
                    } else {
                        self.end_simple();
                        self.pos += if self.peek(1) == Some('&') { 2 } else { 1 };
                    }
                }
                _ => {
                    self.word.push(c);
                    self.in_word = true;
                    self.pos += 1;
                }
            }
        }
        self.end_pipeline();
    }

    /// The rest of a '…' string, taken literally into the current word.
    fn single_quoted(&mut self) {
        while let Some(q) = self.peek(0) {
            self.pos += 1;
            if q == '\'' {
                break;
            }
            self.word.push(q);
        }
    }

    fn double_quoted(&mut self) {
        while let Some(q) = self.peek(0) {
            match q {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    match self.peek(1) {
                        Some(n @ ('"' | '\\' | '$' | '`')) => self.word.push(n),
                        Some('\n') => {}
                        Some(n) => {
                            self.word.push('\\');
                            self.word.push(n);
                        }
                        None => {}
                    }
                    self.pos += 2;
                }
                '`' => {
                    let inner = self.backtick();
                    self.word.push('`');
                    self.word.push_str(&inner);
                    self.word.push('`');
                    self.out.nested.push(inner);
                }
                '$' if self.peek(1) == Some('(') => {
                    self.pos += 2;
                    let inner = self.balanced();
                    self.word.push_str("$(");
                    self.word.push_str(&inner);
                    self.word.push(')');
                    self.out.nested.push(inner);
                }
                _ => {
                    self.word.push(q);
                    self.pos += 1;
                }
            }
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

    fn redirect(&mut self) {
        // A word of digits glued to the operator is a file descriptor (`2>`).
        if self.in_word && self.word.chars().all(|c| c.is_ascii_digit()) {
            self.word.clear();
            self.in_word = false;
        }
        self.end_word();
        let mut op = String::new();
        while let Some(c) = self.peek(0) {
            if matches!(c, '<' | '>' | '&' | '|' | '-') && op.len() < 3 {
                // `-` only belongs to `<<-`; `&`/`|` only directly after `>`.
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
        let target = self.target_word();
        if op.starts_with("<<") && op != "<<<" {
            self.pending_heredocs.push((target.clone(), op == "<<-"));
        }
        self.cur.redirects.push(Redirect { op, target });
    }

    /// Reads one word as a redirection target (quotes removed).
    fn target_word(&mut self) -> String {
        let saved = std::mem::take(&mut self.word);
        let saved_in = std::mem::replace(&mut self.in_word, false);
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | ')' => {
                    if (c == '<' || c == '>') && self.peek(1) == Some('(') && self.word.is_empty() {
                        self.pos += 2;
                        let inner = self.balanced();
                        self.word = format!("{c}({inner})");
                        self.out.nested.push(inner);
                    }
                    break;
                }
                '\'' => {
                    self.pos += 1;
                    self.single_quoted();
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted();
                }
                '\\' => {
                    if let Some(n) = self.peek(1) {
                        self.word.push(n);
                    }
                    self.pos += 2;
                }
                _ => {
                    self.word.push(c);
                    self.pos += 1;
                }
            }
        }
        let target = std::mem::replace(&mut self.word, saved);
        self.in_word = saved_in;
        target
    }

    fn read_heredoc_bodies(&mut self) {
        for (delim, strip_tabs) in std::mem::take(&mut self.pending_heredocs) {
            let mut body = String::new();
            loop {
                if self.pos >= self.chars.len() {
                    break;
                }
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
            if let Some(last) = self.out.pipelines.last_mut().and_then(|p| p.last_mut()) {
                last.heredocs.push(body);
            }
        }
    }

    fn end_word(&mut self) {
        if self.in_word {
            self.cur.words.push(std::mem::take(&mut self.word));
            self.in_word = false;
        }
    }

    fn end_simple(&mut self) {
        self.end_word();
        let simple = std::mem::take(&mut self.cur);
        if !simple.words.is_empty() || !simple.redirects.is_empty() {
            self.pipeline.push(simple);
        }
    }

    fn end_pipeline(&mut self) {
        self.end_simple();
        if !self.pipeline.is_empty() {
            let pipeline = std::mem::take(&mut self.pipeline);
            self.out.pipelines.push(pipeline);
        }
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
