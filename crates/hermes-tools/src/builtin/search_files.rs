//! `search_files`: regex search inside files, or find files by name.

mod in_env;
mod walk;

use crate::Homes;
use std::path::Path;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use serde_json::{Map, Value, json};

use crate::builtin::read_file::support::similar_files;
use crate::builtin::write_file::guard;
use crate::{
    ParallelClass, Tool, ToolContext, ToolError, ToolResult, arg_i64, arg_str, require_str,
};
use walk::{Found, OutputMode, Scope};

/// Content-mode results at or above this count are rendered as compact text.
const DENSIFY_MIN_MATCHES: usize = 5;
/// Results per page are capped at this many (pages beyond ~100K characters
/// would be truncated before the model sees them anyway).
const MAX_LIMIT: i64 = 5_000;
/// Context lines are capped at this many on each side.
const MAX_CONTEXT: i64 = 50;

/// The `search_files` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct SearchFilesTool;

impl Tool for SearchFilesTool {
    fn name(&self) -> &str {
        "search_files"
    }

    fn toolset(&self) -> &str {
        "file"
    }

    fn emoji(&self) -> &str {
        "🔎"
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "search_files".into(),
            description: "Search inside files or find files by name; prefer this over \
                grep/rg/find/ls in the terminal. Built on ripgrep's engine (respects .gitignore, \
                skips hidden and binary files).\n\n\
                Content search (target='content'): regex search of file contents, returning \
                matching lines with line numbers, just the file paths, or per-file match counts.\n\n\
                File search (target='files'): find files by glob such as '*.py' or '*config*'. \
                Also use it instead of ls; results are sorted newest first."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {
                        "type": "string",
                        "description": "Regex for content search, or glob (e.g. '*.py') for file search"
                    },
                    "target": {
                        "type": "string",
                        "enum": ["content", "files"],
                        "description": "'content' searches inside files; 'files' searches file names",
                        "default": "content"
                    },
                    "path": {
                        "type": "string",
                        "description": "Directory or file to search (default: the working directory)",
                        "default": "."
                    },
                    "file_glob": {
                        "type": "string",
                        "description": "Content search only: restrict to files matching this glob \
                            (e.g. '*.py')"
                    },
                    "limit": {
                        "type": "integer",
                        "description": "Maximum number of results to return (default: 50)",
                        "default": 50
                    },
                    "offset": {
                        "type": "integer",
                        "description": "Skip this many results, for paging (default: 0)",
                        "default": 0
                    },
                    "output_mode": {
                        "type": "string",
                        "enum": ["content", "files_only", "count"],
                        "description": "Content search output: 'content' gives matching lines with \
                            line numbers, 'files_only' the paths of matching files, 'count' the \
                            number of matches per file",
                        "default": "content"
                    },
                    "context": {
                        "type": "integer",
                        "description": "Lines of context before and after each match (content \
                            search only)",
                        "default": 0
                    }
                },
                "required": ["pattern"]
            }),
        }
    }

    fn parallel_class(&self) -> ParallelClass {
        ParallelClass::ReadOnly
    }

    fn max_result_chars(&self) -> usize {
        100_000
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let pattern = require_str(&args, "search_files", "pattern")?.to_owned();
            if pattern.is_empty() {
                return Err(ToolError::model(
                    "search_files: 'pattern' is empty. Pass a regex (content search) or a glob (file search).",
                ));
            }
            let files_target = match arg_str(&args, "target").map(str::trim).unwrap_or("content") {
                "content" | "grep" | "" => false,
                "files" | "find" => true,
                other => {
                    return Err(ToolError::model(format!(
                        "search_files: unknown target '{other}'. Use 'content' (search inside \
                         files) or 'files' (find files by name)."
                    )));
                }
            };
            let mode = match arg_str(&args, "output_mode")
                .map(str::trim)
                .unwrap_or("content")
            {
                "content" | "" => OutputMode::Content,
                "files_only" | "files" => OutputMode::FilesOnly,
                "count" => OutputMode::Count,
                other => {
                    return Err(ToolError::model(format!(
                        "search_files: unknown output_mode '{other}'. Use 'content', \
                         'files_only' or 'count'."
                    )));
                }
            };
            let shown_root = arg_str(&args, "path")
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .unwrap_or(".")
                .to_owned();
            let offset = arg_i64(&args, "offset").unwrap_or(0).max(0) as usize;
            let limit = arg_i64(&args, "limit").unwrap_or(50).clamp(1, MAX_LIMIT) as usize;
            let context = arg_i64(&args, "context").unwrap_or(0).clamp(0, MAX_CONTEXT) as usize;
            let file_glob = arg_str(&args, "file_glob")
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .map(str::to_owned);
            let homes = ctx.homes.clone();
            let scope = Scope {
                root: ctx.resolve(&shown_root),
                shown_root,
                offset,
                limit,
                cancel: ctx.cancel.clone(),
                homes: homes.clone(),
            };
            if !ctx.env.is_host() {
                if let Some(msg) = guard::read_blocked(&homes, &scope.root, &scope.shown_root) {
                    return Err(ToolError::model(msg));
                }
                let query = in_env::Query {
                    pattern: &pattern,
                    files_target,
                    file_glob: file_glob.as_deref(),
                    mode,
                };
                let found = in_env::search(ctx, &scope, &query).await?;
                return Ok(render(found, files_target, mode, &pattern, offset, limit));
            }
            tokio::task::spawn_blocking(move || {
                check_root(&homes, &scope)?;
                let found = if files_target {
                    walk::search_files(&scope, &pattern)?
                } else {
                    walk::search_content(&scope, &pattern, file_glob.as_deref(), mode, context)?
                };
                Ok(render(found, files_target, mode, &pattern, offset, limit))
            })
            .await
            .map_err(|e| ToolError::Fatal(format!("search_files task failed: {e}")))?
        })
    }
}

fn check_root(homes: &Homes, scope: &Scope) -> Result<(), ToolError> {
    if let Some(msg) = guard::read_blocked(homes, &scope.root, &scope.shown_root) {
        return Err(ToolError::model(msg));
    }
    if scope.root.exists() {
        return Ok(());
    }
    let mut msg = format!("Path not found: {}", scope.shown_root);
    let parent = scope.root.parent().unwrap_or(Path::new("/"));
    let name = scope
        .root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let similar = similar_files(parent, &name);
    if !similar.is_empty() {
        msg.push_str(&format!(". Similar paths: {}", similar.join(", ")));
    }
    Err(ToolError::model(msg))
}

fn render(
    found: Found,
    files_target: bool,
    mode: OutputMode,
    pattern: &str,
    offset: usize,
    limit: usize,
) -> String {
    let mut obj = Map::new();
    obj.insert("total_count".into(), json!(found.total));
    if !found.matches.is_empty() {
        if found.matches.len() >= DENSIFY_MIN_MATCHES {
            obj.insert(
                "matches_format".into(),
                json!(
                    "path-grouped: each file path on its own line, followed by indented \
                       '<line>: <content>' rows for the matching (and context) lines in that file"
                ),
            );
            obj.insert("matches_text".into(), json!(densify(&found.matches)));
        } else {
            let rows: Vec<Value> = found
                .matches
                .iter()
                .map(
                    |(path, line, content)| json!({"path": path, "line": line, "content": content}),
                )
                .collect();
            obj.insert("matches".into(), Value::Array(rows));
        }
    }
    if !found.files.is_empty() {
        obj.insert("files".into(), json!(found.files));
    }
    if !found.counts.is_empty() {
        obj.insert("counts".into(), json!(found.counts));
    }
    if found.truncated {
        let next = offset + limit;
        obj.insert("truncated".into(), json!(true));
        obj.insert("next_offset".into(), json!(next));
        obj.insert(
            "hint".into(),
            json!(format!(
                "Results truncated. Use offset={next} to see more, or narrow the search with a \
                 more specific pattern{}.",
                if files_target { "" } else { " or file_glob" }
            )),
        );
    }
    if let Some(reason) = found.limit_reason {
        obj.insert("limit_reason".into(), json!(reason));
    }
    let warning = found.warning.or_else(|| {
        (found.total == 0
            && !files_target
            && mode == OutputMode::Content
            && walk::mentions_newline(pattern))
        .then_some(walk::NEWLINE_WARNING)
    });
    if let Some(w) = warning {
        obj.insert("warning".into(), json!(w));
    }
    if found.omitted > 0 {
        obj.insert(
            "_omitted".into(),
            json!(format!(
                "{} file(s) left out because they are secret-bearing environment files.",
                found.omitted
            )),
        );
    }
    Value::Object(obj).to_string()
}

/// Groups rows by path: the path on its own line, then `  <line>: <content>` rows.
fn densify(rows: &[(String, u64, String)]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut current: Option<&str> = None;
    for (path, line, content) in rows {
        if current != Some(path.as_str()) {
            out.push(path.clone());
            current = Some(path);
        }
        out.push(format!("  {line}: {}", content.trim_end()));
    }
    out.join("\n")
}

#[cfg(test)]
#[path = "search_files_tests.rs"]
mod tests;
