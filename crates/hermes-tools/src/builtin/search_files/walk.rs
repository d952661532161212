//! The searches behind `search_files`, on ripgrep's own crates: `ignore` for
//! the directory walk (`.gitignore`, hidden files), `grep-searcher` and
//! `grep-regex` for line-oriented content search.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkBuilder;
use ignore::overrides::{Override, OverrideBuilder};
use tokio_util::sync::CancellationToken;

use crate::builtin::write_file::guard;

/// Match lines longer than this (in characters) are cut in results.
const MAX_MATCH_CHARS: usize = 500;
/// A search stops walking after this long and reports partial results.
const SEARCH_DEADLINE_SECS: u64 = 60;

/// What kind of content-search result to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputMode {
    /// Matching lines (plus context lines).
    Content,
    /// Paths of files with at least one match.
    FilesOnly,
    /// Matching-line count per file.
    Count,
}

/// Where and how to search.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    /// Resolved root (directory or file).
    pub root: PathBuf,
    /// The root as the model wrote it, used to display result paths.
    pub shown_root: String,
    /// Everything from this many results on is skipped…
    pub offset: usize,
    /// …and at most this many are kept.
    pub limit: usize,
    /// Fires on user interrupt.
    pub cancel: CancellationToken,
    /// Whose credential files are never searched (read_file's deny-list).
    pub homes: crate::Homes,
}

impl Scope {
    /// How a walked path is shown: like ripgrep, the root as given joined with the rest.
    pub(crate) fn display(&self, path: &Path) -> String {
        let raw = self.shown_root.trim();
        if raw.starts_with('~') || Path::new(raw).is_absolute() {
            return path.display().to_string();
        }
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => raw.to_owned(),
            Ok(rel) => Path::new(raw).join(rel).display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    fn walker(&self, globs: &[String]) -> Result<ignore::Walk, String> {
        let mut builder = WalkBuilder::new(&self.root);
        builder.sort_by_file_name(|a, b| a.cmp(b));
        if !globs.is_empty() {
            builder.overrides(overrides(&self.root, globs)?);
        }
        Ok(builder.build())
    }
}

fn overrides(root: &Path, globs: &[String]) -> Result<Override, String> {
    let base = if root.is_dir() {
        root
    } else {
        root.parent().unwrap_or(root)
    };
    let mut b = OverrideBuilder::new(base);
    for g in globs {
        b.add(g).map_err(|e| format!("invalid glob '{g}': {e}"))?;
    }
    b.build().map_err(|e| format!("invalid glob: {e}"))
}

/// The collected results of a search.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Content mode: `(path, line, text)` rows in the requested page.
    pub matches: Vec<(String, u64, String)>,
    /// Files-only mode and file search: paths in the requested page.
    pub files: Vec<String>,
    /// Count mode: matches per file in the requested page.
    pub counts: BTreeMap<String, u64>,
    /// Results before paging (rows, files, or summed counts).
    pub total: usize,
    /// Whether more results exist past the page.
    pub truncated: bool,
    /// Why the search stopped early, if it did.
    pub limit_reason: Option<&'static str>,
    /// Secret-bearing files left out of the results.
    pub omitted: usize,
    /// A note about the search itself (e.g. a pattern that cannot match).
    pub warning: Option<&'static str>,
}

/// Shown when a pattern tries to match a line break, which line-oriented search cannot do.
pub(crate) const NEWLINE_WARNING: &str = "0 results found. Note: content search is \
    line-oriented, so `\\n` in the regex cannot match a line break. Search for one line and use \
    context=N to see neighbouring lines, or write `\\\\n` to search for a literal backslash \
    followed by n.";

/// Runs a content search. `Err` carries a model-facing message.
pub(crate) fn search_content(
    scope: &Scope,
    pattern: &str,
    file_glob: Option<&str>,
    mode: OutputMode,
    context: usize,
) -> Result<Found, crate::ToolError> {
    let matcher = RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .build(pattern);
    let matcher = match matcher {
        Ok(m) => m,
        Err(_) if mentions_newline(pattern) => {
            return Ok(Found {
                warning: Some(NEWLINE_WARNING),
                ..Found::default()
            });
        }
        Err(e) => return Err(regex_error(pattern, &e.to_string())),
    };
    let context = if mode == OutputMode::Content {
        context
    } else {
        0
    };
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(context)
        .after_context(context)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build();
    let globs: Vec<String> = file_glob.map(|g| vec![g.to_owned()]).unwrap_or_default();
    let walker = scope
        .walker(&globs)
        .map_err(|e| crate::ToolError::model(format!("file_glob: {e}")))?;
    let deadline = Instant::now() + std::time::Duration::from_secs(SEARCH_DEADLINE_SECS);
    let want = scope.offset.saturating_add(scope.limit);
    let mut found = Found::default();
    let mut files_with_match: Vec<String> = Vec::new();
    let mut counts: Vec<(String, u64)> = Vec::new();
    let mut rows: Vec<(String, u64, String)> = Vec::new();
    // Links are not followed, so every file's real path is under the real root.
    let root_real = crate::paths::canonical_for_overlap(&scope.root);
    let guard = guard::ReadGuard::new(&scope.homes);
    for entry in walker {
        if scope.cancel.is_cancelled() {
            return Err(crate::ToolError::Cancelled);
        }
        if Instant::now() > deadline {
            found.limit_reason = Some("search_timeout");
            break;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        // What read_file refuses, a content search does not read either.
        let resolved = match entry.path().strip_prefix(&scope.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => root_real.join(rel),
            _ => root_real.clone(),
        };
        if guard.check(entry.path(), &resolved, "").is_some() {
            found.omitted += 1;
            continue;
        }
        let room = if mode == OutputMode::Content {
            want.saturating_sub(found.total)
        } else {
            0
        };
        let mut sink = FileSink {
            mode,
            rows: Vec::new(),
            room,
            seen: 0,
            matched_lines: 0,
            binary: false,
        };
        if searcher
            .search_path(&matcher, entry.path(), &mut sink)
            .is_err()
            || sink.binary
        {
            continue;
        }
        if sink.matched_lines == 0 {
            continue;
        }
        let shown = scope.display(entry.path());
        match mode {
            OutputMode::Content => {
                found.total += sink.seen;
                rows.extend(
                    sink.rows
                        .into_iter()
                        .map(|(line, text)| (shown.clone(), line, text)),
                );
            }
            OutputMode::FilesOnly => files_with_match.push(shown),
            OutputMode::Count => counts.push((shown, sink.matched_lines)),
        }
    }
    let (offset, limit) = (scope.offset, scope.limit);
    match mode {
        OutputMode::Content => {
            found.truncated = found.total > want;
            found.matches = rows.into_iter().skip(offset).take(limit).collect();
        }
        OutputMode::FilesOnly => {
            found.total = files_with_match.len();
            found.truncated = found.total > want;
            found.files = files_with_match
                .into_iter()
                .skip(offset)
                .take(limit)
                .collect();
        }
        OutputMode::Count => {
            found.total = counts.iter().map(|(_, c)| *c as usize).sum();
            found.truncated = counts.len() > want;
            found.counts = counts.into_iter().skip(offset).take(limit).collect();
        }
    }
    found.truncated |= found.limit_reason.is_some();
    Ok(found)
}

fn regex_error(pattern: &str, err: &str) -> crate::ToolError {
    crate::ToolError::model(format!(
        "Invalid regex pattern '{pattern}': {err}\nThe pattern is a Rust/ripgrep regular \
         expression: escape special characters such as ( ) [ ] {{ }} . * + ? | \\ with a \
         backslash to match them literally."
    ))
}

/// True when a regex tries to match a line break (`\n` escape or a literal newline).
pub(crate) fn mentions_newline(pattern: &str) -> bool {
    if pattern.contains('\n') {
        return true;
    }
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'\\' {
            if bytes[i + 1] == b'n' {
                return true;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    false
}

/// Collects one file's results.
struct FileSink {
    mode: OutputMode,
    /// `(line, text)` rows kept for the page.
    rows: Vec<(u64, String)>,
    /// How many more rows the page can still use.
    room: usize,
    /// Rows (matches and context lines) seen in this file.
    seen: usize,
    matched_lines: u64,
    binary: bool,
}

impl FileSink {
    fn push(&mut self, line: Option<u64>, bytes: &[u8]) {
        self.seen += 1;
        if self.rows.len() < self.room {
            let text = String::from_utf8_lossy(bytes);
            let text = text.trim_end_matches(['\n', '\r']);
            let text: String = text.chars().take(MAX_MATCH_CHARS).collect();
            self.rows.push((line.unwrap_or(0), text));
        }
    }
}

impl Sink for FileSink {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.matched_lines += 1;
        match self.mode {
            OutputMode::Content => {
                self.push(mat.line_number(), mat.bytes());
                Ok(true)
            }
            OutputMode::FilesOnly => Ok(false),
            OutputMode::Count => Ok(true),
        }
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.mode == OutputMode::Content {
            self.push(ctx.line_number(), ctx.bytes());
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// Finds files by glob, newest first. A pattern without `/` matches file names
/// at any depth (a bare name such as `config` is treated as `*config`).
pub(crate) fn search_files(scope: &Scope, pattern: &str) -> Result<Found, crate::ToolError> {
    let glob = if !pattern.contains('/') && !pattern.starts_with('*') {
        format!("*{pattern}")
    } else {
        pattern.to_owned()
    };
    let walker = scope
        .walker(&[glob])
        .map_err(|e| crate::ToolError::model(format!("Invalid file pattern '{pattern}': {e}")))?;
    let deadline = Instant::now() + std::time::Duration::from_secs(SEARCH_DEADLINE_SECS);
    let mut found = Found::default();
    let mut all: Vec<(SystemTime, String)> = Vec::new();
    for entry in walker {
        if scope.cancel.is_cancelled() {
            return Err(crate::ToolError::Cancelled);
        }
        if Instant::now() > deadline {
            found.limit_reason = Some("search_timeout");
            break;
        }
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 || !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let mtime = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        all.push((mtime, scope.display(entry.path())));
    }
    all.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    found.total = all.len();
    found.truncated =
        found.total > scope.offset.saturating_add(scope.limit) || found.limit_reason.is_some();
    found.files = all
        .into_iter()
        .skip(scope.offset)
        .take(scope.limit)
        .map(|(_, p)| p)
        .collect();
    Ok(found)
}
