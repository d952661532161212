//! The tree the shell parser builds: scripts of nodes (pipelines of simple
//! commands, subshells, groups, function definitions), each command's words
//! kept as their parts, and redirections. The parser is in `parse.rs`.

/// One piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Literal text. `quoted` when it came from quotes or a backslash escape:
    /// such text is never split, globbed or brace-expanded.
    Lit {
        /// The text.
        text: String,
        /// Protected from expansion.
        quoted: bool,
    },
    /// `$name`, `${…}` or a special parameter: the text inside (`HOME`,
    /// `HOME:-x`, `#`, `@` …).
    Param {
        /// The expression.
        expr: String,
        /// Inside double quotes (not split).
        quoted: bool,
    },
    /// `$(…)` or backticks: the inner script.
    Command {
        /// The script.
        script: String,
        /// Inside double quotes (not split).
        quoted: bool,
    },
    /// `$((…))`: arithmetic, never resolved here.
    Arith,
    /// `<(…)` or `>(…)`: the inner script, whose output the word names.
    Process {
        /// The script.
        script: String,
    },
}

/// A shell word as written: its parts in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The parts.
    pub parts: Vec<Part>,
}

impl Word {
    /// The word's text when it is all literal (quotes removed), else `None`.
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit { text, .. } => out.push_str(text),
                _ => return None,
            }
        }
        Some(out)
    }

    /// The word with quotes removed and expansions shown as written (`$X`, `$(…)`).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit { text, .. } => out.push_str(text),
                Part::Param { expr, .. } => {
                    out.push_str("${");
                    out.push_str(expr);
                    out.push('}');
                }
                Part::Command { script, .. } => {
                    out.push_str("$(");
                    out.push_str(script);
                    out.push(')');
                }
                Part::Arith => out.push_str("$((…))"),
                Part::Process { script } => {
                    out.push_str("<(");
                    out.push_str(script);
                    out.push(')');
                }
            }
        }
        out
    }

    pub(super) fn push_lit(&mut self, c: char, quoted: bool) {
        if let Some(Part::Lit { text, quoted: q }) = self.parts.last_mut()
            && *q == quoted
        {
            text.push(c);
            return;
        }
        self.parts.push(Part::Lit {
            text: c.to_string(),
            quoted,
        });
    }

    pub(super) fn push_str(&mut self, s: &str, quoted: bool) {
        for c in s.chars() {
            self.push_lit(c, quoted);
        }
        if s.is_empty() && quoted {
            // `''` is an empty word, not no word.
            self.parts.push(Part::Lit {
                text: String::new(),
                quoted: true,
            });
        }
    }
}

/// One redirection: its operator (`>`, `>>`, `<`, `<<`, `<<<`, `>&` …) and target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The operator without any leading file-descriptor number.
    pub op: String,
    /// The target word (the delimiter for heredocs).
    pub target: Word,
}

/// One simple command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Simple {
    /// Leading `NAME=value` assignments.
    pub assignments: Vec<(String, Word)>,
    /// The words, command first.
    pub words: Vec<Word>,
    /// Redirections in source order.
    pub redirects: Vec<Redirect>,
    /// Bodies of heredocs attached to this command.
    pub heredocs: Vec<String>,
}

/// One element of a script, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// Simple commands joined by `|`; `background` when ended by `&`.
    Pipeline {
        /// The stages.
        stages: Vec<Simple>,
        /// Run in the background.
        background: bool,
    },
    /// `( … )`: a subshell (its `cd` and variables stay inside).
    Subshell(Script),
    /// `name() …` or `function name …`: the body follows as ordinary nodes.
    Function(String),
}

/// A parsed script.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// Its nodes in order.
    pub nodes: Vec<Node>,
}

impl Script {
    /// Every simple command at this level, in order.
    pub fn simples(&self) -> impl Iterator<Item = &Simple> {
        self.nodes.iter().flat_map(|n| match n {
            Node::Pipeline { stages, .. } => stages.as_slice(),
            _ => &[],
        })
    }
}
