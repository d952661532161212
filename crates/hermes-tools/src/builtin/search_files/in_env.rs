//! `search_files` in the session's environment (sandbox, ssh): `grep` and
//! `find` run there, and their results are paged and shown as the host
//! search shows them.

use std::collections::BTreeMap;
use std::path::Path;

use hermes_env::files;

use super::walk::{Found, OutputMode, Scope};
use crate::builtin::write_file::guard;
use crate::{ToolContext, ToolError};

/// Most rows fetched from the environment before paging.
const MAX_ROWS: usize = 5_000;

/// What to look for.
pub(crate) struct Query<'a> {
    /// The regex (content) or glob (file names).
    pub pattern: &'a str,
    /// Find files by name instead of searching content.
    pub files_target: bool,
    /// Only files named like this (content search).
    pub file_glob: Option<&'a str>,
    /// How content results are shown.
    pub mode: OutputMode,
}

/// Runs the search in `ctx`'s environment.
pub(crate) async fn search(
    ctx: &ToolContext,
    scope: &Scope,
    query: &Query<'_>,
) -> Result<Found, ToolError> {
    let env = ctx.env.as_ref();
    if files::stat(env, &scope.root, &ctx.cwd)
        .await
        .map_err(|e| ToolError::model(format!("search_files: {e}")))?
        .is_none()
    {
        return Err(ToolError::model(format!(
            "Path not found: {}",
            scope.shown_root
        )));
    }
    let mut found = Found::default();
    let end = scope.offset + scope.limit;
    let readable = |p: &str| guard::read_blocked(&scope.homes, Path::new(p), p).is_none();
    if query.files_target {
        let paths = files::find(env, query.pattern, &scope.root, MAX_ROWS, &ctx.cwd)
            .await
            .map_err(|e| ToolError::model(format!("search_files: {e}")))?;
        let (kept, omitted): (Vec<String>, Vec<String>) =
            paths.into_iter().partition(|p| readable(p));
        found.omitted = omitted.len();
        found.total = kept.len();
        found.truncated = kept.len() > end;
        found.files = page(kept, scope)
            .into_iter()
            .map(|p| scope.display(Path::new(&p)))
            .collect();
        return Ok(found);
    }
    let hits = files::grep(
        env,
        query.pattern,
        &scope.root,
        query.file_glob,
        MAX_ROWS,
        &ctx.cwd,
    )
    .await
    .map_err(|e| ToolError::model(format!("search_files: {e}")))?;
    let (hits, omitted): (Vec<_>, Vec<_>) = hits.into_iter().partition(|(p, _, _)| readable(p));
    found.omitted = omitted
        .iter()
        .map(|(p, _, _)| p)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    match query.mode {
        OutputMode::Content => {
            found.total = hits.len();
            found.truncated = hits.len() > end;
            found.matches = page(hits, scope)
                .into_iter()
                .map(|(p, n, text)| (scope.display(Path::new(&p)), n, text))
                .collect();
        }
        OutputMode::FilesOnly => {
            let mut names: Vec<String> = hits.into_iter().map(|(p, _, _)| p).collect();
            names.dedup();
            found.total = names.len();
            found.truncated = names.len() > end;
            found.files = page(names, scope)
                .into_iter()
                .map(|p| scope.display(Path::new(&p)))
                .collect();
        }
        OutputMode::Count => {
            let mut counts: BTreeMap<String, u64> = BTreeMap::new();
            for (p, _, _) in &hits {
                *counts.entry(scope.display(Path::new(p))).or_default() += 1;
            }
            found.total = hits.len();
            found.counts = counts;
        }
    }
    Ok(found)
}

fn page<T>(items: Vec<T>, scope: &Scope) -> Vec<T> {
    items
        .into_iter()
        .skip(scope.offset)
        .take(scope.limit)
        .collect()
}
