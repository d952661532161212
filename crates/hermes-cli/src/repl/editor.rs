//! The line editor: rustyline with completion of `/commands` and `@file` paths,
//! multi-line input (Alt+Enter, or a trailing `\`) and history in
//! `$HERMES_HOME/.hermes_history` (the reference's file name and format, see
//! [`super::history_file`]).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::{History, MemHistory};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{
    Cmd, Config, Context, EditMode, Editor, EventHandler, KeyCode, KeyEvent, Modifiers,
};

use super::commands;

/// The history file under HERMES_HOME.
pub const HISTORY_FILE: &str = ".hermes_history";

/// Most entries kept in the history file.
const HISTORY_LIMIT: usize = 5000;

/// Most `@file` candidates offered at once; a huge directory should not flood the screen.
const MAX_FILE_CANDIDATES: usize = 200;

/// Completion and validation for the prompt.
#[derive(Debug)]
pub struct ReplHelper {
    /// Where relative `@` paths are resolved.
    cwd: PathBuf,
    /// The line as last drawn: a prompt stopped from outside returns
    /// nothing, and this gives what was typed back (see [`super::prompt`]).
    typed: Arc<Mutex<String>>,
}

impl ReplHelper {
    /// A helper resolving `@` paths against `cwd`.
    pub fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            typed: Arc::default(),
        }
    }

    /// Where the line being edited is kept as it changes.
    pub fn typed(&self) -> Arc<Mutex<String>> {
        self.typed.clone()
    }
}

/// The editor type the REPL uses.
pub type ReplEditor = Editor<ReplHelper, MemHistory>;

/// An editor with our bindings and the history loaded (a missing or unreadable
/// history file is not an error: the session just starts without one).
pub fn build(cwd: PathBuf, history: &Path) -> rustyline::Result<ReplEditor> {
    let config = Config::builder()
        .edit_mode(EditMode::Emacs)
        .auto_add_history(false)
        .max_history_size(HISTORY_LIMIT)?
        .history_ignore_dups(true)?
        .history_ignore_space(true)
        .completion_type(rustyline::CompletionType::List)
        .bracketed_paste(true)
        .build();
    let memory = MemHistory::with_config(&config);
    let mut editor = ReplEditor::with_history(config, memory)?;
    editor.set_helper(Some(ReplHelper::new(cwd)));
    // Alt+Enter inserts a newline instead of submitting, like the reference's prompt.
    editor.bind_sequence(
        KeyEvent(KeyCode::Enter, Modifiers::ALT),
        EventHandler::Simple(Cmd::Newline),
    );
    for entry in super::history_file::load(history) {
        editor.history_mut().add_owned(entry)?;
    }
    Ok(editor)
}

/// Turns what the editor returned into the message to send: the continuation
/// backslashes at line ends are dropped.
pub fn join_continuations(input: &str) -> String {
    input
        .split('\n')
        .map(|l| l.strip_suffix('\\').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        });
        let word = &before[start..];
        if start == 0 && word.starts_with('/') {
            let pairs = commands::complete(word)
                .into_iter()
                .map(|c| Pair {
                    display: c.clone(),
                    replacement: format!("{c} "),
                })
                .collect();
            return Ok((0, pairs));
        }
        if let Some(path) = word.strip_prefix('@') {
            return Ok((start, complete_path(&self.cwd, path)));
        }
        Ok((pos, Vec::new()))
    }
}

/// `@path` candidates: entries of the directory `partial` names, matching its
/// last component; directories end in `/` so Tab can keep descending.
pub fn complete_path(cwd: &Path, partial: &str) -> Vec<Pair> {
    let (dir_part, stem) = match partial.rfind('/') {
        Some(i) => (&partial[..=i], &partial[i + 1..]),
        None => ("", partial),
    };
    let dir = if dir_part.starts_with('/') {
        PathBuf::from(dir_part)
    } else {
        cwd.join(dir_part)
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found: Vec<(String, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            // Hidden entries only when asked for, as shells do.
            if !name.starts_with(stem) || (name.starts_with('.') && !stem.starts_with('.')) {
                return None;
            }
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            Some((name, is_dir))
        })
        .take(MAX_FILE_CANDIDATES)
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|(name, is_dir)| {
            let suffix = if is_dir { "/" } else { "" };
            Pair {
                display: format!("{name}{suffix}"),
                replacement: format!("@{dir_part}{name}{}", if is_dir { "/" } else { " " }),
            }
        })
        .collect()
}

impl Validator for ReplHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        // A trailing backslash asks for another line, as in a shell.
        if ctx.input().ends_with('\\') {
            Ok(ValidationResult::Incomplete)
        } else {
            Ok(ValidationResult::Valid(None))
        }
    }
}

impl Hinter for ReplHelper {
    type Hint = String;

    // rustyline asks for a hint whenever the line changes: the moment to note it.
    fn hint(&self, line: &str, _pos: usize, _ctx: &Context<'_>) -> Option<String> {
        let mut typed = self.typed.lock().unwrap_or_else(PoisonError::into_inner);
        if *typed != line {
            line.clone_into(&mut typed);
        }
        None
    }
}

impl Highlighter for ReplHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}

impl rustyline::Helper for ReplHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_backslashes_are_dropped_when_joining() {
        assert_eq!(join_continuations("one\\\ntwo"), "one\ntwo");
        assert_eq!(join_continuations("a\nb"), "a\nb");
    }

    #[test]
    fn at_paths_complete_from_the_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), "x").unwrap();
        std::fs::create_dir(dir.path().join("nested")).unwrap();
        std::fs::write(dir.path().join("nested/inner.rs"), "x").unwrap();
        std::fs::write(dir.path().join(".hidden"), "x").unwrap();
        let names: Vec<String> = complete_path(dir.path(), "")
            .into_iter()
            .map(|p| p.replacement)
            .collect();
        assert_eq!(names, vec!["@nested/", "@notes.md "]);
        let inner: Vec<String> = complete_path(dir.path(), "nested/in")
            .into_iter()
            .map(|p| p.replacement)
            .collect();
        assert_eq!(inner, vec!["@nested/inner.rs "]);
        assert!(complete_path(dir.path(), "missing/").is_empty());
    }
}
