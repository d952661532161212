//! `patch`: targeted edits, either one find-and-replace with tolerant matching
//! (`mode=replace`) or a V4A multi-file patch (`mode=patch`).

pub(crate) mod apply;
pub(crate) mod diff;
pub(crate) mod fuzzy;
pub(crate) mod rewrite;
pub(crate) mod v4a;

use crate::Homes;
use std::path::{Path, PathBuf};

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use serde_json::{Map, Value, json};

use crate::builtin::file_io::FileIo;
use crate::builtin::write_file::{fsio, guard, syntax_gate};
use crate::{ParallelClass, Tool, ToolContext, ToolError, ToolResult, arg_bool, arg_str};
use hermes_env::files::Kind;
use rewrite::MatchError;

/// The `patch` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct PatchTool;

const V4A_EXAMPLE: &str = "*** Begin Patch\n*** Update File: path/to/file\n@@ context hint \
                           @@\n context line\n-removed line\n+added line\n*** End Patch";

impl Tool for PatchTool {
    fn name(&self) -> &str {
        "patch"
    }

    fn toolset(&self) -> &str {
        "file"
    }

    fn emoji(&self) -> &str {
        "🔧"
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "patch".into(),
            description: "Make targeted edits to files; prefer this over sed/awk in the terminal. \
                Matching is tolerant (9 strategies), so small whitespace or indentation \
                differences still match. Returns a unified diff.\n\n\
                REPLACE MODE (mode='replace', the default): replace one unique occurrence of a \
                string. REQUIRED: mode, path, old_string, new_string.\n\
                PATCH MODE (mode='patch'): apply a V4A multi-file patch for larger changes. \
                REQUIRED: mode, patch."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "mode": {
                        "type": "string",
                        "enum": ["replace", "patch"],
                        "description": "Edit mode. 'replace' (default) needs path, old_string and \
                            new_string; 'patch' needs only the patch text.",
                        "default": "replace"
                    },
                    "path": {
                        "type": "string",
                        "description": "REQUIRED for mode='replace'. The file to edit."
                    },
                    "old_string": {
                        "type": "string",
                        "description": "REQUIRED for mode='replace'. The text to replace. It \
                            must occur exactly once unless replace_all=true, so include enough \
                            surrounding lines to make it unique."
                    },
                    "new_string": {
                        "type": "string",
                        "description": "REQUIRED for mode='replace'. The replacement text; pass \
                            '' to delete the matched text."
                    },
                    "replace_all": {
                        "type": "boolean",
                        "description": "Replace every occurrence instead of requiring a unique \
                            match (default: false)",
                        "default": false
                    },
                    "patch": {
                        "type": "string",
                        "description": format!(
                            "REQUIRED for mode='patch'. The V4A patch text, e.g.:\n{V4A_EXAMPLE}"
                        )
                    },
                    "cross_profile": {
                        "type": "boolean",
                        "description": "Opt out of the cross-profile soft guard. Leave false \
                            unless the user explicitly asked to edit another Hermes profile's \
                            skills, plugins, cron jobs or memories.",
                        "default": false
                    }
                },
                "required": ["mode"]
            }),
        }
    }

    fn parallel_class(&self) -> ParallelClass {
        ParallelClass::PathScoped
    }

    fn max_result_chars(&self) -> usize {
        100_000
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let homes = ctx.homes.clone();
            let mode = arg_str(&args, "mode")
                .map(str::trim)
                .filter(|m| !m.is_empty());
            let job: Box<dyn FnOnce() -> ToolResult + Send> = match mode.unwrap_or("replace") {
                "replace" => {
                    let req = ReplaceRequest::from_args(&args)?;
                    let path = ctx.resolve(&req.path);
                    if let Err(refused) = ctx.approve_write("patch", &path).await {
                        return Ok(refused);
                    }
                    let io = super::file_io::for_context(ctx);
                    Box::new(move || replace(io.as_ref(), &homes, &path, &req))
                }
                "patch" => {
                    let text = arg_str(&args, "patch")
                        .filter(|p| !p.trim().is_empty())
                        .ok_or_else(|| {
                            ToolError::model(format!(
                                "patch: mode='patch' needs the 'patch' argument holding V4A patch \
                             text, e.g.:\n{V4A_EXAMPLE}"
                            ))
                        })?;
                    let text = text.to_owned();
                    for target in v4a_targets(&text) {
                        if let Err(refused) =
                            ctx.approve_write("patch", &ctx.resolve(&target)).await
                        {
                            return Ok(refused);
                        }
                    }
                    let cwd = ctx.cwd.clone();
                    let io = super::file_io::for_context(ctx);
                    Box::new(move || patch_v4a(io.as_ref(), &homes, &text, &cwd))
                }
                other => {
                    return Err(ToolError::model(format!(
                        "patch: unknown mode '{other}'. Use mode='replace' (path, old_string, \
                         new_string) or mode='patch' (patch)."
                    )));
                }
            };
            tokio::task::spawn_blocking(job)
                .await
                .map_err(|e| ToolError::Fatal(format!("patch task failed: {e}")))?
        })
    }
}

/// The files a V4A patch adds, updates, deletes or moves to.
fn v4a_targets(text: &str) -> Vec<String> {
    const HEADERS: [&str; 4] = [
        "*** Add File:",
        "*** Update File:",
        "*** Delete File:",
        "*** Move to:",
    ];
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            HEADERS
                .iter()
                .find_map(|h| l.strip_prefix(h))
                .map(|p| p.trim().to_owned())
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// Arguments of a replace-mode call.
struct ReplaceRequest {
    path: String,
    old: String,
    new: String,
    replace_all: bool,
}

impl ReplaceRequest {
    fn from_args(args: &Value) -> Result<Self, ToolError> {
        let path = arg_str(args, "path")
            .filter(|p| !p.trim().is_empty())
            .ok_or_else(|| {
                ToolError::model(
                    "patch: 'path' is required when mode='replace'. Call patch again with path, \
                 old_string and new_string (or use mode='patch' with a V4A patch).",
                )
            })?;
        let (Some(old), Some(new)) = (arg_str(args, "old_string"), arg_str(args, "new_string"))
        else {
            return Err(ToolError::model(
                "patch: 'old_string' and 'new_string' are both required (as strings) when \
                 mode='replace'. Pass new_string='' to delete text.",
            ));
        };
        Ok(Self {
            path: path.to_owned(),
            old: old.to_owned(),
            new: new.to_owned(),
            replace_all: arg_bool(args, "replace_all").unwrap_or(false),
        })
    }
}

fn replace(io: &dyn FileIo, homes: &Homes, path: &Path, req: &ReplaceRequest) -> ToolResult {
    let shown = req.path.as_str();
    if let Some(msg) = guard::write_denied(homes, path, shown) {
        return Err(ToolError::model(msg));
    }
    match io.kind(path) {
        Ok(Some(Kind::Dir)) => {
            return Err(ToolError::model(format!(
                "{shown} is a directory; patch edits files."
            )));
        }
        Ok(None) => {
            return Err(ToolError::model(format!(
                "File not found: {shown}. patch edits existing files; use write_file to create a \
                 new one."
            )));
        }
        Ok(Some(Kind::File)) => {}
        Err(e) => return Err(ToolError::model(fsio::describe_io(path, &e))),
    }
    let file = super::file_io::read_text(io, path).map_err(ToolError::model)?;
    let (old, new) = if file.crlf {
        (req.old.replace("\r\n", "\n"), req.new.replace("\r\n", "\n"))
    } else {
        (req.old.clone(), req.new.clone())
    };
    let replaced = match rewrite::find_and_replace(&file.text, &old, &new, req.replace_all) {
        Ok(r) => r,
        Err(MatchError::NotFound) => {
            let hint = rewrite::no_match_hint(&old, &file.text);
            let advice = if hint.is_empty() {
                " Use read_file to check the current content, or search_files to locate the text."
            } else {
                ""
            };
            return Err(ToolError::model(format!(
                "Could not find a match for old_string in {shown}.{advice}{hint}"
            )));
        }
        Err(e) => return Err(ToolError::model(format!("{shown}: {}", e.message()))),
    };
    if let Some(msg) = syntax_gate(path, &replaced.content) {
        return Err(ToolError::model(msg));
    }
    io.write(path, file.render(&replaced.content).as_bytes())
        .map_err(|e| ToolError::model(format!("Failed to write changes to {shown}: {e}")))?;
    let resolved = path.display().to_string();
    let mut result = json!({
        "success": true,
        "diff": diff::unified_diff(&file.text, &replaced.content, &format!("a/{shown}"), &format!("b/{shown}")),
        "files_modified": [resolved],
        "resolved_path": resolved,
    });
    if let Some(obj) = result.as_object_mut() {
        if replaced.count > 1 {
            obj.insert("replacements".into(), json!(replaced.count));
        }
        if replaced.strategy != fuzzy::Strategy::Exact {
            obj.insert("match_strategy".into(), json!(replaced.strategy.name()));
        }
    }
    Ok(result.to_string())
}

fn patch_v4a(io: &dyn FileIo, homes: &Homes, text: &str, cwd: &Path) -> ToolResult {
    let ops =
        v4a::parse(text).map_err(|e| ToolError::model(format!("Failed to parse patch: {e}")))?;
    let resolve = |p: &str| -> PathBuf { crate::paths::resolve(cwd, p, homes.home.as_deref()) };
    let outcome = apply::apply_ops(io, homes, &ops, &resolve).map_err(ToolError::model)?;
    let mut obj = Map::new();
    obj.insert("success".into(), json!(true));
    if !outcome.diff.is_empty() {
        obj.insert("diff".into(), json!(outcome.diff));
    }
    for (key, list) in [
        ("files_modified", outcome.modified),
        ("files_created", outcome.created),
        ("files_deleted", outcome.deleted),
    ] {
        if !list.is_empty() {
            obj.insert(key.into(), json!(list));
        }
    }
    Ok(Value::Object(obj).to_string())
}

#[cfg(test)]
#[path = "patch_tests.rs"]
mod tests;
