//! Applying parsed V4A operations all-or-nothing: every operation is first
//! simulated in memory against the current files; only when all succeed are
//! the results written, and a failure while writing rolls back what was done.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::diff::unified_diff;
use super::fuzzy;
use super::rewrite::{self, MatchError};
use super::v4a::{FileOp, Hunk, OpKind};
use crate::builtin::file_io::{FileIo, read_text};
use crate::builtin::write_file::{fsio, guard, syntax_gate};
use hermes_env::files::Kind;

/// What a successful patch did.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Files edited (or renamed, as `old -> new`).
    pub modified: Vec<String>,
    /// Files created.
    pub created: Vec<String>,
    /// Files deleted.
    pub deleted: Vec<String>,
    /// Combined unified diff.
    pub diff: String,
}

/// The simulated state of one touched path: `None` means deleted.
#[derive(Debug, Clone)]
struct Planned {
    content: Option<String>,
    bom: bool,
    crlf: bool,
}

/// Simulates `ops`, then writes the results. `resolve` maps patch paths to files.
pub(crate) fn apply_ops(
    io: &dyn FileIo,
    homes: &crate::Homes,
    ops: &[FileOp],
    resolve: &dyn Fn(&str) -> PathBuf,
) -> Result<Outcome, String> {
    let mut plan: BTreeMap<PathBuf, Planned> = BTreeMap::new();
    let mut order: Vec<PathBuf> = Vec::new();
    let mut out = Outcome::default();
    let mut errors: Vec<String> = Vec::new();
    let mut diffs: Vec<String> = Vec::new();
    let mut real_changes = 0usize;

    for op in ops {
        let path = resolve(&op.path);
        if let Some(msg) = guard::write_denied(homes, &path, &op.path) {
            errors.push(msg);
            continue;
        }
        match &op.kind {
            OpKind::Add(lines) => {
                real_changes += 1;
                if matches!(io.kind(&path), Ok(Some(Kind::Dir))) {
                    errors.push(format!(
                        "{}: is a directory, cannot add it as a file",
                        op.path
                    ));
                    continue;
                }
                let mut content = lines.join("\n");
                if !lines.is_empty() {
                    content.push('\n');
                }
                if let Some(msg) = syntax_gate(&path, &content) {
                    errors.push(msg);
                    continue;
                }
                diffs.push(unified_diff(
                    "",
                    &content,
                    "/dev/null",
                    &format!("b/{}", op.path),
                ));
                set(
                    &mut plan,
                    &mut order,
                    path.clone(),
                    Planned {
                        content: Some(content),
                        bom: false,
                        crlf: false,
                    },
                );
                out.created.push(path.display().to_string());
            }
            OpKind::Delete => {
                real_changes += 1;
                match deletable(io, &plan, &path) {
                    Ok(old) => {
                        diffs.push(match old {
                            Some(old) => {
                                unified_diff(&old, "", &format!("a/{}", op.path), "/dev/null")
                            }
                            None => format!("# Deleted: {}", op.path),
                        });
                        set(
                            &mut plan,
                            &mut order,
                            path.clone(),
                            Planned {
                                content: None,
                                bom: false,
                                crlf: false,
                            },
                        );
                        out.deleted.push(path.display().to_string());
                    }
                    Err(e) => errors.push(format!("{}: cannot delete: {e}", op.path)),
                }
            }
            OpKind::Move { to } => {
                real_changes += 1;
                let dest = resolve(to);
                let src = match current(io, &plan, &path) {
                    Ok(f) => f,
                    Err(e) => {
                        errors.push(format!("{}: cannot move: {e}", op.path));
                        continue;
                    }
                };
                if let Some(msg) = guard::write_denied(homes, &dest, to) {
                    errors.push(msg);
                    continue;
                }
                if let Err(msg) = check_destination(io, &plan, &dest, to) {
                    errors.push(msg);
                    continue;
                }
                diffs.push(format!("# Moved: {} -> {}", op.path, to));
                set(&mut plan, &mut order, dest.clone(), src);
                set(
                    &mut plan,
                    &mut order,
                    path.clone(),
                    Planned {
                        content: None,
                        bom: false,
                        crlf: false,
                    },
                );
                out.modified
                    .push(format!("{} -> {}", path.display(), dest.display()));
            }
            OpKind::Update { hunks, move_to } => {
                let file = match current(io, &plan, &path) {
                    Ok(f) => f,
                    Err(e) => {
                        errors.push(format!("{}: {e}", op.path));
                        continue;
                    }
                };
                let old = file.content.clone().unwrap_or_default();
                let (new, changed, hunk_errors) = apply_hunks(&old, hunks);
                real_changes += changed;
                if !hunk_errors.is_empty() {
                    errors.extend(hunk_errors.into_iter().map(|e| format!("{}: {e}", op.path)));
                    continue;
                }
                let dest = move_to.as_deref().map(|m| (resolve(m), m));
                let shown_to = dest.as_ref().map_or(op.path.as_str(), |(_, m)| m);
                let target = dest
                    .as_ref()
                    .map_or_else(|| path.clone(), |(p, _)| p.clone());
                if let Some((dest_path, m)) = &dest {
                    if let Some(msg) = guard::write_denied(homes, dest_path, m) {
                        errors.push(msg);
                        continue;
                    }
                    if *dest_path != path {
                        if let Err(msg) = check_destination(io, &plan, dest_path, m) {
                            errors.push(msg);
                            continue;
                        }
                        real_changes += 1;
                    }
                }
                if let Some(msg) = syntax_gate(&target, &new) {
                    errors.push(msg);
                    continue;
                }
                diffs.push(unified_diff(
                    &old,
                    &new,
                    &format!("a/{}", op.path),
                    &format!("b/{shown_to}"),
                ));
                let planned = Planned {
                    content: Some(new),
                    ..file
                };
                if target != path {
                    set(
                        &mut plan,
                        &mut order,
                        path.clone(),
                        Planned {
                            content: None,
                            bom: false,
                            crlf: false,
                        },
                    );
                    out.modified
                        .push(format!("{} -> {}", path.display(), target.display()));
                } else {
                    out.modified.push(path.display().to_string());
                }
                set(&mut plan, &mut order, target, planned);
            }
        }
    }
    if errors.is_empty() && real_changes == 0 {
        errors.push("the patch contains no changes (only context lines were given)".into());
    }
    if !errors.is_empty() {
        let list: Vec<String> = errors.iter().map(|e| format!("  • {e}")).collect();
        return Err(format!(
            "Patch validation failed (no files were modified):\n{}",
            list.join("\n")
        ));
    }
    commit(io, &plan, &order)?;
    dedup(&mut out.modified);
    out.diff = diffs
        .into_iter()
        .filter(|d| !d.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    Ok(out)
}

fn dedup(v: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    v.retain(|s| seen.insert(s.clone()));
}

fn set(plan: &mut BTreeMap<PathBuf, Planned>, order: &mut Vec<PathBuf>, path: PathBuf, p: Planned) {
    if !plan.contains_key(&path) {
        order.push(path.clone());
    }
    plan.insert(path, p);
}

/// The current (simulated) state of an existing text file.
fn current(
    io: &dyn FileIo,
    plan: &BTreeMap<PathBuf, Planned>,
    path: &Path,
) -> Result<Planned, String> {
    if let Some(p) = plan.get(path) {
        return match p.content {
            Some(_) => Ok(p.clone()),
            None => Err("file was already deleted or moved earlier in this patch".into()),
        };
    }
    if matches!(io.kind(path), Ok(Some(Kind::Dir))) {
        return Err("is a directory, not a file".into());
    }
    let file = read_text(io, path)?;
    Ok(Planned {
        content: Some(file.text),
        bom: file.bom,
        crlf: file.crlf,
    })
}

/// The text of a file about to be deleted (`None` when it is not text).
fn deletable(
    io: &dyn FileIo,
    plan: &BTreeMap<PathBuf, Planned>,
    path: &Path,
) -> Result<Option<String>, String> {
    if let Some(p) = plan.get(path) {
        return p
            .content
            .clone()
            .map(Some)
            .ok_or_else(|| "file was already deleted or moved earlier in this patch".to_owned());
    }
    if !matches!(io.kind(path), Ok(Some(Kind::File))) {
        return Err("file not found".into());
    }
    Ok(read_text(io, path).ok().map(|f| f.text))
}

fn check_destination(
    io: &dyn FileIo,
    plan: &BTreeMap<PathBuf, Planned>,
    dest: &Path,
    shown: &str,
) -> Result<(), String> {
    let exists = match plan.get(dest) {
        Some(p) => p.content.is_some(),
        None => matches!(io.kind(dest), Ok(Some(_))),
    };
    if exists {
        Err(format!(
            "{shown}: destination already exists; the move would overwrite it"
        ))
    } else {
        Ok(())
    }
}

/// Applies hunks in order; returns the new text, how many hunks changed
/// something, and per-hunk errors.
fn apply_hunks(text: &str, hunks: &[Hunk]) -> (String, usize, Vec<String>) {
    let mut text = text.to_owned();
    let mut cursor = 0usize;
    let mut changed = 0;
    let mut errors = Vec::new();
    for (i, hunk) in hunks.iter().enumerate() {
        if !hunk.changes_anything() {
            continue;
        }
        changed += 1;
        match apply_hunk(&text, hunk, cursor) {
            Ok((next, end)) => {
                text = next;
                cursor = end;
            }
            Err(e) => {
                let label = hunk
                    .hint
                    .as_deref()
                    .map_or("(no hint)".to_owned(), |h| format!("'{h}'"));
                errors.push(format!("hunk {} {label}: {e}", i + 1));
            }
        }
    }
    (text, changed, errors)
}

/// Byte offset of the start of the first line at or after `from` containing
/// `hint` (falling back to the whole text).
fn hint_position(text: &str, hint: &str, from: usize) -> Option<usize> {
    let needle = hint.trim();
    let bounds = fuzzy::line_bounds(text);
    let hit = |&&(s, e): &&(usize, usize)| text[s..e].contains(needle);
    bounds
        .iter()
        .filter(|b| b.0 >= from)
        .find(hit)
        .or_else(|| bounds.iter().find(hit))
        .map(|b| b.0)
}

/// Applies one hunk; returns the new text and the byte offset just past the edit.
fn apply_hunk(text: &str, hunk: &Hunk, cursor: usize) -> Result<(String, usize), String> {
    let search = hunk.search_lines().join("\n");
    let replace = hunk.replace_lines().join("\n");
    if hunk.search_lines().is_empty() {
        return insert_only(text, hunk, &replace);
    }
    let (strategy, spans) = fuzzy::find(text, &search).ok_or_else(|| {
        format!(
            "not found — {}{}",
            MatchError::NotFound.message(),
            rewrite::no_match_hint(&search, text)
        )
    })?;
    let span = if spans.len() == 1 {
        spans[0]
    } else if let Some(anchor) = hunk
        .hint
        .as_deref()
        .and_then(|h| hint_position(text, h, cursor))
    {
        *spans.iter().find(|s| s.0 >= anchor).ok_or_else(|| {
            format!(
                "the hunk's lines occur {} times but none after its context hint",
                spans.len()
            )
        })?
    } else if hunk.eof {
        spans[spans.len() - 1]
    } else {
        let after: Vec<_> = spans.iter().filter(|s| s.0 >= cursor).collect();
        match after.as_slice() {
            [only] => **only,
            _ => {
                return Err(format!(
                    "the hunk's lines match {} places; add an '@@ <line near the change>' hint \
                     or more context lines to make it unique",
                    spans.len()
                ));
            }
        }
    };
    let new =
        rewrite::apply(text, &[span], strategy, &search, &replace).map_err(|e| e.message())?;
    let end = new.len() - (text.len() - span.1);
    Ok((new, end))
}

/// A hunk with only `+` lines: inserted after the line holding its hint, else at the end.
fn insert_only(text: &str, hunk: &Hunk, insert: &str) -> Result<(String, usize), String> {
    if let (Some(hint), false) = (hunk.hint.as_deref(), hunk.eof) {
        let count = text.matches(hint).count();
        if count == 0 {
            return Err(format!(
                "addition-only hunk: context hint '{hint}' not found"
            ));
        }
        if count > 1 {
            return Err(format!(
                "addition-only hunk: context hint '{hint}' is ambiguous ({count} occurrences); \
                 use a more specific hint"
            ));
        }
        let pos = text.find(hint).unwrap_or(0);
        let at = text[pos..].find('\n').map_or(text.len(), |e| pos + e + 1);
        let mut out = text[..at].to_owned();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(insert);
        out.push('\n');
        let end = out.len();
        out.push_str(&text[at..]);
        return Ok((out, end));
    }
    let base = text.trim_end_matches('\n');
    let mut out = if base.is_empty() {
        String::new()
    } else {
        format!("{base}\n")
    };
    out.push_str(insert);
    out.push('\n');
    let end = out.len();
    Ok((out, end))
}

/// Writes the plan; on failure restores every file already touched.
fn commit(
    io: &dyn FileIo,
    plan: &BTreeMap<PathBuf, Planned>,
    order: &[PathBuf],
) -> Result<(), String> {
    let mut done: Vec<(&PathBuf, Option<Vec<u8>>)> = Vec::new();
    for path in order {
        let Some(p) = plan.get(path) else { continue };
        let original = io.read(path).ok();
        let result = match &p.content {
            Some(text) => io
                .write(path, fsio::render_with(text, p.bom, p.crlf).as_bytes())
                .map(|_| ()),
            None => io.remove(path),
        };
        match result {
            Ok(()) => done.push((path, original)),
            Err(e) => {
                for (p, orig) in done.into_iter().rev() {
                    let _ = match orig {
                        Some(bytes) => io.write(p, &bytes).map(|_| ()),
                        None => io.remove(p),
                    };
                }
                return Err(format!(
                    "Failed to write {}: {e}. Changes already made by this patch were rolled back.",
                    path.display()
                ));
            }
        }
    }
    Ok(())
}
