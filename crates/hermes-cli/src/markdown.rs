//! Streaming markdown → ANSI for the terminal.
//!
//! Tokens arrive a few characters at a time, so rendering works line by line:
//! a line is drawn once its newline arrives (inline markup rarely spans lines),
//! fenced code is styled line by line, and only tables are held back until
//! their last row so the columns can be aligned. Inline markup is parsed with
//! pulldown-cmark; block structure is recognised here because a streaming
//! renderer cannot wait for the whole document.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const ITALIC: &str = "\x1b[3m";
const UNDERLINE: &str = "\x1b[4m";
const STRIKE: &str = "\x1b[9m";
/// Heading colour (gold, like the reference's banner accents).
const HEADING: &str = "\x1b[38;5;214m";
/// Inline code: a soft cyan.
const CODE: &str = "\x1b[38;5;116m";
/// Fenced code body.
const CODE_BLOCK: &str = "\x1b[38;5;180m";
/// Keywords inside fenced code.
const KEYWORD: &str = "\x1b[38;5;170m";
/// Comments inside fenced code.
const COMMENT: &str = "\x1b[38;5;244m";

/// Words highlighted in any fenced block: a small cross-language set is
/// enough to make code scannable without a syntax-definition dependency.
const KEYWORDS: &[&str] = &[
    "fn", "let", "mut", "pub", "use", "impl", "struct", "enum", "match", "if", "else", "for",
    "while", "loop", "return", "def", "class", "import", "from", "const", "var", "function",
    "async", "await", "in", "not", "and", "or", "True", "False", "None", "true", "false", "null",
    "self", "Self", "mod", "trait", "where", "type", "static", "try", "except", "catch", "new",
];

/// A streaming markdown renderer.
#[derive(Debug, Default)]
pub struct Markdown {
    /// The incomplete last line.
    pending: String,
    /// Inside a fenced code block: its fence (``` or ~~~).
    fence: Option<String>,
    /// Table rows waiting for the end of the table.
    table: Vec<String>,
}

impl Markdown {
    /// A renderer at the start of a document.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds streamed text; returns what can be drawn now.
    pub fn feed(&mut self, text: &str) -> String {
        self.pending.push_str(text);
        let mut out = String::new();
        while let Some(i) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=i).collect();
            self.line(line.trim_end_matches(['\n', '\r']), &mut out);
        }
        out
    }

    /// The response ended: draws whatever is still held and resets.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            self.line(&rest, &mut out);
        }
        self.flush_table(&mut out);
        self.fence = None;
        out
    }

    fn line(&mut self, line: &str, out: &mut String) {
        let trimmed = line.trim_start();
        if let Some(fence) = &self.fence {
            if trimmed.starts_with(fence.as_str()) && trimmed.trim_end() == fence {
                self.fence = None;
                out.push_str(&format!("{DIM}  └──{RESET}\n"));
            } else {
                out.push_str(&format!("{DIM}  │{RESET} {}\n", highlight(line)));
            }
            return;
        }
        if trimmed.starts_with('|') {
            self.table.push(trimmed.to_owned());
            return;
        }
        self.flush_table(out);
        if let Some(fence) = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f)) {
            self.fence = Some(fence.to_owned());
            let lang = trimmed.trim_start_matches(fence).trim();
            out.push_str(&format!("{DIM}  ┌── {lang}{RESET}\n"));
            return;
        }
        out.push_str(&block_line(line));
        out.push('\n');
    }

    fn flush_table(&mut self, out: &mut String) {
        if self.table.is_empty() {
            return;
        }
        let rows: Vec<Vec<String>> = std::mem::take(&mut self.table)
            .iter()
            .filter(|r| !is_separator_row(r))
            .map(|r| split_row(r).into_iter().map(|c| inline(&c)).collect())
            .collect();
        let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..cols)
            .map(|c| {
                rows.iter()
                    .filter_map(|r| r.get(c))
                    .map(|cell| visible_width(cell))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for (i, row) in rows.iter().enumerate() {
            let mut line = String::from("  ");
            for (c, width) in widths.iter().enumerate() {
                let cell = row.get(c).map_or("", String::as_str);
                let pad = width.saturating_sub(visible_width(cell));
                if c > 0 {
                    line.push_str(&format!(" {DIM}│{RESET} "));
                }
                if i == 0 {
                    line.push_str(&format!("{BOLD}{cell}{RESET}"));
                } else {
                    line.push_str(cell);
                }
                line.push_str(&" ".repeat(pad));
            }
            out.push_str(line.trim_end());
            out.push('\n');
            if i == 0 {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                out.push_str(&format!("  {DIM}{}{RESET}\n", rule.join("─┼─")));
            }
        }
    }
}

/// One line outside code and tables: headings, list items, quotes, rules, text.
fn block_line(line: &str) -> String {
    let indent_len = line.len() - line.trim_start().len();
    let (indent, body) = line.split_at(indent_len);
    let hashes = body.chars().take_while(|&c| c == '#').count();
    if (1..=6).contains(&hashes) && body[hashes..].starts_with(' ') {
        let text = inline(body[hashes..].trim());
        let style = if hashes == 1 {
            format!("{BOLD}{UNDERLINE}{HEADING}")
        } else {
            format!("{BOLD}{HEADING}")
        };
        return format!("{style}{text}{RESET}");
    }
    let compact: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.len() >= 3
        && ["-", "*", "_"]
            .iter()
            .any(|m| compact.chars().all(|c| c.to_string() == *m))
    {
        return format!("{DIM}{}{RESET}", "─".repeat(40));
    }
    for bullet in ["- ", "* ", "+ "] {
        if let Some(rest) = body.strip_prefix(bullet) {
            let (mark, rest) = match rest.strip_prefix("[ ] ") {
                Some(r) => ("☐", r),
                None => match rest
                    .strip_prefix("[x] ")
                    .or_else(|| rest.strip_prefix("[X] "))
                {
                    Some(r) => ("☑", r),
                    None => ("•", rest),
                },
            };
            return format!("{indent}{HEADING}{mark}{RESET} {}", inline(rest));
        }
    }
    let digits = body.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && (body[digits..].starts_with(". ") || body[digits..].starts_with(") ")) {
        let rest = &body[digits + 2..];
        return format!(
            "{indent}{HEADING}{}.{RESET} {}",
            &body[..digits],
            inline(rest)
        );
    }
    if let Some(rest) = body.strip_prefix('>') {
        return format!(
            "{indent}{DIM}│ {ITALIC}{}{RESET}",
            inline(rest.trim_start())
        );
    }
    format!("{indent}{}", inline(body))
}

/// Inline markup (bold, italics, code, links, strikethrough) of one line.
pub fn inline(text: &str) -> String {
    // A line that markdown would read as a block (a list marker, a heading) is
    // parsed as plain inline text: block structure was handled by the caller.
    let mut out = String::new();
    let mut styles: Vec<&str> = Vec::new();
    let mut link: Vec<String> = Vec::new();
    let reapply = |styles: &[&str], out: &mut String| {
        out.push_str(RESET);
        for s in styles {
            out.push_str(s);
        }
    };
    let source = escape_block_start(text);
    for event in Parser::new_ext(&source, Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Text(t) => out.push_str(&t),
            Event::Code(c) => {
                out.push_str(CODE);
                out.push_str(&c);
                reapply(&styles, &mut out);
            }
            Event::SoftBreak | Event::HardBreak => out.push(' '),
            Event::Start(Tag::Strong) => {
                styles.push(BOLD);
                out.push_str(BOLD);
            }
            Event::Start(Tag::Emphasis) => {
                styles.push(ITALIC);
                out.push_str(ITALIC);
            }
            Event::Start(Tag::Strikethrough) => {
                styles.push(STRIKE);
                out.push_str(STRIKE);
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                styles.push(UNDERLINE);
                out.push_str(UNDERLINE);
                link.push(dest_url.to_string());
            }
            Event::End(TagEnd::Strong | TagEnd::Emphasis | TagEnd::Strikethrough) => {
                styles.pop();
                reapply(&styles, &mut out);
            }
            Event::End(TagEnd::Link) => {
                styles.pop();
                reapply(&styles, &mut out);
                if let Some(url) = link.pop() {
                    out.push_str(&format!(" {DIM}({url}){RESET}"));
                    reapply(&styles, &mut out);
                }
            }
            Event::Html(h) | Event::InlineHtml(h) => out.push_str(&h),
            _ => {}
        }
    }
    if !styles.is_empty() {
        out.push_str(RESET);
    }
    out
}

/// Escapes a start that markdown would read as a block construct (a heading,
/// quote, list marker), which would swallow the line's inline text.
fn escape_block_start(text: &str) -> String {
    let t = text.trim_start();
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && t[digits..].starts_with(['.', ')']) {
        return format!("{}\\{}", &t[..digits], &t[digits..]);
    }
    if t.starts_with(['#', '>']) || ["- ", "+ ", "* "].iter().any(|m| t.starts_with(m)) {
        return format!("\\{t}");
    }
    t.to_owned()
}

fn is_separator_row(row: &str) -> bool {
    row.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

fn split_row(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').map(|c| c.trim().to_owned()).collect()
}

/// Display width of styled text: escape sequences take no room.
pub fn visible_width(s: &str) -> usize {
    let mut width = 0;
    let mut in_escape = false;
    for c in s.chars() {
        match (in_escape, c) {
            (false, '\x1b') => in_escape = true,
            (true, 'm') => in_escape = false,
            (true, _) => {}
            (false, _) => width += 1,
        }
    }
    width
}

/// Colours keywords, strings and line comments in a line of code.
fn highlight(line: &str) -> String {
    let code = line.trim_start();
    if ["//", "#", "--"].iter().any(|p| code.starts_with(p)) {
        return format!("{COMMENT}{line}{RESET}");
    }
    let mut out = String::from(CODE_BLOCK);
    let mut word = String::new();
    let mut in_string: Option<char> = None;
    let flush = |word: &mut String, out: &mut String| {
        if KEYWORDS.contains(&word.as_str()) {
            out.push_str(&format!("{KEYWORD}{word}{CODE_BLOCK}"));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in line.chars() {
        if let Some(q) = in_string {
            out.push(c);
            if c == q {
                in_string = None;
                out.push_str(CODE_BLOCK);
            }
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut out);
        if c == '"' || c == '\'' || c == '`' {
            in_string = Some(c);
            out.push_str(CODE);
        }
        out.push(c);
    }
    flush(&mut word, &mut out);
    out.push_str(RESET);
    out
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
