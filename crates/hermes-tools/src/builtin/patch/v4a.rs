//! Parser for the V4A multi-file patch format:
//!
//! ```text
//! *** Begin Patch
//! *** Update File: src/app.py
//! *** Move to: src/main.py          (optional rename)
//! @@ def handler():                 (optional context hint)
//!  context line
//! -removed line
//! +added line
//! *** End of File                   (optional: hunk sits at the end of the file)
//! *** Add File: docs/new.md
//! +first line
//! *** Delete File: old.txt
//! *** Move File: a.txt -> b.txt
//! *** End Patch
//! ```

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HunkLine {
    /// Unchanged line (` ` prefix, or no recognised prefix).
    Context(String),
    /// Removed line (`-`).
    Remove(String),
    /// Added line (`+`).
    Add(String),
}

/// A group of changes within an updated file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// Text after `@@`, used to find the right place when the hunk's lines occur more than once.
    pub hint: Option<String>,
    /// The hunk's lines, in order.
    pub lines: Vec<HunkLine>,
    /// Marked with `*** End of File`: the hunk belongs at the end of the file.
    pub eof: bool,
}

impl Hunk {
    /// The text the hunk expects to find (context and removed lines).
    pub(crate) fn search_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Remove(s) => Some(s.as_str()),
                HunkLine::Add(_) => None,
            })
            .collect()
    }

    /// The text the hunk leaves behind (context and added lines).
    pub(crate) fn replace_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Add(s) => Some(s.as_str()),
                HunkLine::Remove(_) => None,
            })
            .collect()
    }

    /// True when the hunk adds or removes something.
    pub(crate) fn changes_anything(&self) -> bool {
        self.lines
            .iter()
            .any(|l| !matches!(l, HunkLine::Context(_)))
    }
}

/// What a file operation does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OpKind {
    /// Create (or overwrite) a file with these lines.
    Add(Vec<String>),
    /// Remove a file.
    Delete,
    /// Edit a file in place, optionally renaming it.
    Update {
        hunks: Vec<Hunk>,
        move_to: Option<String>,
    },
    /// Rename a file without editing it.
    Move { to: String },
}

/// One file operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileOp {
    /// The file the operation targets, as written in the patch.
    pub path: String,
    /// What to do to it.
    pub kind: OpKind,
}

/// The directive after `***` on a header line, e.g. `Update File: x`.
fn directive(line: &str) -> Option<&str> {
    line.trim_start().strip_prefix("***").map(str::trim_start)
}

fn strip_key<'a>(rest: &'a str, words: &[&str]) -> Option<&'a str> {
    let mut s = rest;
    for (i, w) in words.iter().enumerate() {
        s = s.strip_prefix(w)?;
        if i + 1 < words.len() {
            let trimmed = s.trim_start();
            if trimmed.len() == s.len() {
                return None;
            }
            s = trimmed;
        }
    }
    Some(s.trim())
}

/// Parses a V4A patch into file operations.
pub(crate) fn parse(text: &str) -> Result<Vec<FileOp>, String> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let is = |l: &str, what: &str| directive(l).is_some_and(|d| d.trim_end() == what);
    let begin = lines.iter().position(|l| is(l, "Begin Patch"));
    let start = begin.map_or(0, |b| b + 1);
    let end = lines[start..]
        .iter()
        .position(|l| is(l, "End Patch"))
        .map_or(lines.len(), |e| start + e);

    let mut p = Parser::default();
    for (idx, line) in lines[start..end].iter().enumerate() {
        p.line(idx + start + 1, line)?;
    }
    p.finish_op();
    validate(&p.ops)?;
    Ok(p.ops)
}

#[derive(Default)]
struct Parser {
    ops: Vec<FileOp>,
    current: Option<FileOp>,
    hunk: Option<Hunk>,
    /// Blank patch lines not yet known to be inside the hunk (trailing ones are dropped).
    pending_blank: usize,
}

impl Parser {
    fn line(&mut self, no: usize, line: &str) -> Result<(), String> {
        if let Some(d) = directive(line) {
            if let Some(path) = strip_key(d, &["Update", "File:"]) {
                return self.start(FileOp {
                    path: path.to_owned(),
                    kind: OpKind::Update {
                        hunks: Vec::new(),
                        move_to: None,
                    },
                });
            }
            if let Some(path) = strip_key(d, &["Add", "File:"]) {
                return self.start(FileOp {
                    path: path.to_owned(),
                    kind: OpKind::Add(Vec::new()),
                });
            }
            if let Some(path) = strip_key(d, &["Delete", "File:"]) {
                return self.start(FileOp {
                    path: path.to_owned(),
                    kind: OpKind::Delete,
                });
            }
            if let Some(spec) = strip_key(d, &["Move", "File:"]) {
                let (from, to) = spec.split_once("->").ok_or_else(|| {
                    format!("line {no}: '*** Move File:' needs 'source -> destination'")
                })?;
                return self.start(FileOp {
                    path: from.trim().to_owned(),
                    kind: OpKind::Move {
                        to: to.trim().to_owned(),
                    },
                });
            }
            if let Some(dest) = strip_key(d, &["Move", "to:"]) {
                return match &mut self.current {
                    Some(FileOp {
                        kind: OpKind::Update { move_to, .. },
                        ..
                    }) => {
                        *move_to = Some(dest.to_owned());
                        Ok(())
                    }
                    _ => Err(format!(
                        "line {no}: '*** Move to:' must follow an '*** Update File:' header"
                    )),
                };
            }
            if d.trim_end() == "End of File" {
                self.pending_blank = 0;
                return match (&self.current, &mut self.hunk) {
                    (
                        Some(FileOp {
                            kind: OpKind::Update { .. },
                            ..
                        }),
                        Some(h),
                    ) => {
                        h.eof = true;
                        Ok(())
                    }
                    (
                        Some(FileOp {
                            kind: OpKind::Add(_),
                            ..
                        }),
                        _,
                    ) => Ok(()),
                    _ => Err(format!(
                        "line {no}: '*** End of File' outside an update hunk"
                    )),
                };
            }
            if d.trim_end() == "Begin Patch" {
                return Ok(());
            }
            if d.chars().next().is_some_and(char::is_alphabetic) {
                return Err(format!(
                    "line {no}: unrecognised directive '{}'. Expected '*** Add File:', \
                     '*** Update File:', '*** Delete File:', '*** Move File:', '*** Move to:' \
                     or '*** End of File'",
                    line.trim()
                ));
            }
        }
        self.content(no, line)
    }

    fn start(&mut self, op: FileOp) -> Result<(), String> {
        self.finish_op();
        self.current = Some(op);
        Ok(())
    }

    fn finish_hunk(&mut self) {
        self.pending_blank = 0;
        if let (
            Some(h),
            Some(FileOp {
                kind: OpKind::Update { hunks, .. },
                ..
            }),
        ) = (self.hunk.take(), self.current.as_mut())
            && !h.lines.is_empty()
        {
            hunks.push(h);
        }
    }

    fn finish_op(&mut self) {
        self.finish_hunk();
        if let Some(op) = self.current.take() {
            self.ops.push(op);
        }
    }

    fn content(&mut self, no: usize, line: &str) -> Result<(), String> {
        let shown = || line.chars().take(80).collect::<String>();
        let Some(op) = self.current.as_mut() else {
            // Blank lines and Markdown code fences around the patch are noise.
            if line.trim().is_empty() || line.trim_start().starts_with("```") {
                return Ok(());
            }
            return Err(format!(
                "line {no}: expected a file header ('*** Update File: PATH', '*** Add File: \
                 PATH' or '*** Delete File: PATH') but found '{}'",
                shown()
            ));
        };
        match &mut op.kind {
            OpKind::Delete | OpKind::Move { .. } => {
                if line.trim().is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "line {no}: unexpected content after the header for '{}': '{}'",
                        op.path,
                        shown()
                    ))
                }
            }
            OpKind::Add(lines) => {
                if line.is_empty() {
                    self.pending_blank += 1;
                    return Ok(());
                }
                let Some(rest) = line.strip_prefix('+') else {
                    return Err(format!(
                        "line {no}: in '*** Add File: {}' every content line must start with \
                         '+', found '{}'",
                        op.path,
                        shown()
                    ));
                };
                lines.extend(std::iter::repeat_n(String::new(), self.pending_blank));
                self.pending_blank = 0;
                lines.push(rest.to_owned());
                Ok(())
            }
            OpKind::Update { .. } => {
                if let Some(rest) = line.strip_prefix("@@") {
                    self.finish_hunk();
                    let hint = rest.trim();
                    let hint = hint.strip_suffix("@@").unwrap_or(hint).trim();
                    self.hunk = Some(Hunk {
                        hint: (!hint.is_empty() && !is_line_range(hint)).then(|| hint.to_owned()),
                        ..Hunk::default()
                    });
                    return Ok(());
                }
                if line.is_empty() {
                    self.pending_blank += 1;
                    return Ok(());
                }
                if line.starts_with('\\') {
                    return Ok(()); // "\ No newline at end of file"
                }
                let entry = match line.as_bytes()[0] {
                    b'+' => HunkLine::Add(line[1..].to_owned()),
                    b'-' => HunkLine::Remove(line[1..].to_owned()),
                    b' ' => HunkLine::Context(line[1..].to_owned()),
                    _ => HunkLine::Context(line.to_owned()),
                };
                let hunk = self.hunk.get_or_insert_with(Hunk::default);
                hunk.lines.extend(std::iter::repeat_n(
                    HunkLine::Context(String::new()),
                    self.pending_blank,
                ));
                self.pending_blank = 0;
                hunk.lines.push(entry);
                Ok(())
            }
        }
    }
}

/// True for unified-diff range headers such as `-12,5 +12,6`, which carry no
/// usable context text.
fn is_line_range(hint: &str) -> bool {
    hint.starts_with('-')
        && hint.contains('+')
        && hint
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | ',' | ' '))
}

fn has_traversal(path: &str) -> bool {
    path.split(['/', '\\']).any(|c| c == "..")
}

fn validate(ops: &[FileOp]) -> Result<(), String> {
    if ops.is_empty() {
        return Err(
            "the patch contains no file operations. Start each file with '*** Update \
                    File: PATH', '*** Add File: PATH' or '*** Delete File: PATH'."
                .into(),
        );
    }
    let mut errors = Vec::new();
    for op in ops {
        let mut paths = vec![op.path.as_str()];
        match &op.kind {
            OpKind::Update { hunks, move_to } => {
                if hunks.is_empty() {
                    errors.push(format!("Update File '{}': no hunks found", op.path));
                }
                paths.extend(move_to.as_deref());
            }
            OpKind::Move { to } => paths.push(to),
            OpKind::Add(_) | OpKind::Delete => {}
        }
        for p in paths {
            if p.is_empty() {
                errors.push("an operation has an empty file path".into());
            } else if has_traversal(p) {
                errors.push(format!(
                    "'{p}' contains a '..' component; use a path relative to the working \
                     directory without '..', or an absolute path"
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

#[cfg(test)]
#[path = "v4a_tests.rs"]
mod tests;
