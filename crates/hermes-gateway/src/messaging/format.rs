//! Markdown (what models write) in each platform's dialect: Telegram's
//! MarkdownV2 (everything special escaped), Slack's mrkdwn; Discord takes
//! markdown as it is. Parsed with pulldown-cmark, so nesting and code are
//! handled by a real parser rather than patterns.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// A platform's markdown dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Telegram MarkdownV2.
    TelegramV2,
    /// Slack mrkdwn.
    Slack,
}

const TG_SPECIAL: &str = "_*[]()~`>#+-=|{}.!\\";

fn escape_text(text: &str, dialect: Dialect) -> String {
    match dialect {
        Dialect::TelegramV2 => {
            let mut out = String::with_capacity(text.len() + 8);
            for c in text.chars() {
                if TG_SPECIAL.contains(c) {
                    out.push('\\');
                }
                out.push(c);
            }
            out
        }
        Dialect::Slack => text
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;"),
    }
}

fn escape_code(text: &str, dialect: Dialect) -> String {
    match dialect {
        Dialect::TelegramV2 => text.replace('\\', "\\\\").replace('`', "\\`"),
        Dialect::Slack => text
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;"),
    }
}

struct Renderer {
    dialect: Dialect,
    out: String,
    /// Open lists: `Some(n)` numbered from n, `None` bulleted.
    lists: Vec<Option<u64>>,
    /// Link targets waiting for their text to end.
    links: Vec<String>,
    quote_depth: usize,
    quote_start: Vec<usize>,
    in_code_block: bool,
}

impl Renderer {
    fn bold(&self) -> &'static str {
        "*"
    }
    fn italic(&self) -> &'static str {
        "_"
    }
    fn strike(&self) -> &'static str {
        "~"
    }

    fn block_gap(&mut self) {
        let trimmed = self.out.trim_end_matches(' ');
        if trimmed.is_empty() {
            return;
        }
        if !trimmed.ends_with("\n\n") {
            if trimmed.ends_with('\n') {
                self.out.push('\n');
            } else {
                self.out.push_str("\n\n");
            }
        }
    }

    fn line_break(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
    }

    fn event(&mut self, event: Event<'_>) {
        let d = self.dialect;
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if self.in_code_block {
                    self.out.push_str(&escape_code(&text, d));
                } else {
                    self.out.push_str(&escape_text(&text, d));
                }
            }
            Event::Code(code) => {
                self.out.push('`');
                self.out.push_str(&escape_code(&code, d));
                self.out.push('`');
            }
            Event::SoftBreak | Event::HardBreak => self.out.push('\n'),
            Event::Rule => {
                self.block_gap();
                self.out.push_str("——————");
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                self.out.push_str(&escape_text(&html, d))
            }
            Event::TaskListMarker(done) => self.out.push_str(if done { "☑ " } else { "☐ " }),
            Event::FootnoteReference(name) => {
                self.out.push_str(&escape_text(&format!("[{name}]"), d))
            }
            Event::InlineMath(m) | Event::DisplayMath(m) => self.out.push_str(&escape_text(&m, d)),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph if self.lists.is_empty() => self.block_gap(),
            Tag::Paragraph => {}
            Tag::Heading { .. } => {
                self.block_gap();
                let b = self.bold();
                self.out.push_str(b);
            }
            Tag::BlockQuote(_) => {
                self.block_gap();
                self.quote_depth += 1;
                self.quote_start.push(self.out.len());
            }
            Tag::CodeBlock(kind) => {
                self.block_gap();
                let lang = match &kind {
                    CodeBlockKind::Fenced(lang) if self.dialect == Dialect::TelegramV2 => {
                        lang.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    _ => String::new(),
                };
                self.out.push_str("```");
                self.out.push_str(&lang);
                self.out.push('\n');
                self.in_code_block = true;
            }
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.block_gap();
                } else {
                    self.line_break();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.line_break();
                let depth = self.lists.len().saturating_sub(1);
                self.out.push_str(&"  ".repeat(depth));
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}.");
                        *n += 1;
                        escape_text(&m, self.dialect)
                    }
                    _ => "•".to_owned(),
                };
                self.out.push_str(&marker);
                self.out.push(' ');
            }
            Tag::Emphasis => {
                let i = self.italic();
                self.out.push_str(i);
            }
            Tag::Strong => {
                let b = self.bold();
                self.out.push_str(b);
            }
            Tag::Strikethrough => {
                let s = self.strike();
                self.out.push_str(s);
            }
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.out.push_str(match self.dialect {
                    Dialect::TelegramV2 => "[",
                    Dialect::Slack => "<",
                });
                if self.dialect == Dialect::Slack {
                    self.out.push_str(&dest_url);
                    self.out.push('|');
                }
                self.links.push(dest_url.to_string());
            }
            Tag::Table(_) | Tag::TableHead | Tag::TableRow => self.line_break(),
            Tag::TableCell if !self.out.ends_with('\n') && !self.out.is_empty() => {
                self.out.push_str(&escape_text(" | ", self.dialect));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Heading(level) => {
                let b = self.bold();
                self.out.push_str(b);
                if level == HeadingLevel::H1 {
                    self.out.push('\n');
                }
            }
            TagEnd::BlockQuote(_) => {
                self.quote_depth = self.quote_depth.saturating_sub(1);
                if let Some(start) = self.quote_start.pop() {
                    let body = self.out.split_off(start);
                    let quoted = body
                        .trim_end()
                        .lines()
                        .map(|l| format!(">{l}"))
                        .collect::<Vec<_>>()
                        .join("\n");
                    self.out.push_str(&quoted);
                }
            }
            TagEnd::CodeBlock => {
                self.in_code_block = false;
                if !self.out.ends_with('\n') {
                    self.out.push('\n');
                }
                self.out.push_str("```");
            }
            TagEnd::List(_) => {
                self.lists.pop();
            }
            TagEnd::Emphasis => {
                let i = self.italic();
                self.out.push_str(i);
            }
            TagEnd::Strong => {
                let b = self.bold();
                self.out.push_str(b);
            }
            TagEnd::Strikethrough => {
                let s = self.strike();
                self.out.push_str(s);
            }
            TagEnd::Link | TagEnd::Image => {
                let url = self.links.pop().unwrap_or_default();
                match self.dialect {
                    Dialect::TelegramV2 => {
                        self.out.push_str("](");
                        self.out
                            .push_str(&url.replace('\\', "\\\\").replace(')', "\\)"));
                        self.out.push(')');
                    }
                    Dialect::Slack => self.out.push('>'),
                }
            }
            _ => {}
        }
    }
}

/// `markdown` in `dialect`.
pub fn convert(markdown: &str, dialect: Dialect) -> String {
    let options =
        Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS;
    let mut renderer = Renderer {
        dialect,
        out: String::with_capacity(markdown.len() + 16),
        lists: Vec::new(),
        links: Vec::new(),
        quote_depth: 0,
        quote_start: Vec::new(),
        in_code_block: false,
    };
    for event in Parser::new_ext(markdown, options) {
        renderer.event(event);
    }
    renderer.out.trim_end().to_owned()
}

/// Markdown as the HTML of a Matrix `formatted_body`: raw HTML in the
/// answer is shown as text (never passed through), line breaks kept, and a
/// lone paragraph unwrapped.
pub fn matrix_html(markdown: &str) -> String {
    let options = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES;
    let events = Parser::new_ext(markdown, options).map(|event| match event {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        Event::SoftBreak => Event::HardBreak,
        other => other,
    });
    let mut html = String::with_capacity(markdown.len() + 32);
    pulldown_cmark::html::push_html(&mut html, events);
    let html = html.trim_end();
    match html
        .strip_prefix("<p>")
        .and_then(|rest| rest.strip_suffix("</p>"))
        .filter(|inner| !inner.contains("<p>"))
    {
        Some(inner) => inner.to_owned(),
        None => html.to_owned(),
    }
}

/// Markdown reduced to plain text (a fallback when a platform rejects the
/// formatted version): markers dropped, code and links kept readable.
pub fn plain(markdown: &str) -> String {
    let mut out = String::new();
    let mut links = Vec::new();
    for event in Parser::new_ext(
        markdown,
        Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES,
    ) {
        match event {
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => {
                out.push_str(&t)
            }
            Event::SoftBreak | Event::HardBreak => out.push('\n'),
            Event::Start(
                Tag::Paragraph | Tag::Heading { .. } | Tag::CodeBlock(_) | Tag::List(_),
            ) if !out.is_empty() && !out.ends_with("\n\n") => {
                out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
            }
            Event::Start(Tag::Item) => {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("• ");
            }
            Event::Start(Tag::Link { dest_url, .. }) => links.push(dest_url.to_string()),
            Event::End(TagEnd::Link) => {
                if let Some(url) = links.pop() {
                    out.push_str(&format!(" ({url})"));
                }
            }
            Event::Start(Tag::TableCell) if !out.ends_with('\n') && !out.is_empty() => {
                out.push_str(" | ")
            }
            Event::End(TagEnd::TableRow | TagEnd::TableHead) => out.push('\n'),
            _ => {}
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn telegram_escapes_and_converts() {
        let md = "# Title\n\nSome **bold** and *it* and ~~gone~~. Costs 1.5 (approx)!\n\n- a_b\n- `x*y`\n\n```python\nprint(\"a`b\")\n```\n\n[link](http://e.x/a_(b))";
        let got = convert(md, Dialect::TelegramV2);
        assert_eq!(
            got,
            "*Title*\n\nSome *bold* and _it_ and ~gone~\\. Costs 1\\.5 \\(approx\\)\\!\n\n• a\\_b\n• `x*y`\n\n```python\nprint(\"a\\`b\")\n```\n\n[link](http://e.x/a_(b\\))"
        );
    }

    #[test]
    fn slack_mrkdwn() {
        let got = convert(
            "**Hi** <you> & [docs](https://d.x) ~~no~~ _yes_",
            Dialect::Slack,
        );
        assert_eq!(got, "*Hi* &lt;you&gt; &amp; <https://d.x|docs> ~no~ _yes_");
    }

    #[test]
    fn plain_drops_markers() {
        assert_eq!(plain("**a** `b` [c](http://d)"), "a b c (http://d)");
    }
}
