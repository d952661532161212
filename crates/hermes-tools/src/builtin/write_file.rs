//! `write_file`: replace a file's whole content (creating it and its parents).

pub(crate) mod fsio;

use super::file_io::FileIo;
use hermes_env::files::Kind;
pub(crate) mod guard;

use crate::Homes;
use std::path::Path;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use serde_json::{Value, json};

use crate::{ParallelClass, Tool, ToolContext, ToolError, ToolResult, arg_str};

/// The `write_file` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFileTool;

impl Tool for WriteFileTool {
    fn name(&self) -> &str {
        "write_file"
    }

    fn toolset(&self) -> &str {
        "file"
    }

    fn emoji(&self) -> &str {
        "✍️"
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "write_file".into(),
            description: "Write a file, replacing everything in it. Prefer this over echo/cat \
                heredocs in the terminal. Missing parent directories are created. The whole file \
                is OVERWRITTEN, so use 'patch' for targeted edits. JSON files are syntax-checked \
                before anything is written."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File to write (created if missing, overwritten if present)"
                    },
                    "content": {
                        "type": "string",
                        "description": "The complete new content of the file"
                    },
                    "cross_profile": {
                        "type": "boolean",
                        "description": "Opt out of the cross-profile soft guard. Leave false \
                            unless the user explicitly asked to edit another Hermes profile's \
                            skills, plugins, cron jobs or memories.",
                        "default": false
                    }
                },
                "required": ["path", "content"]
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
            let raw_path = arg_str(&args, "path").filter(|p| !p.trim().is_empty()).ok_or_else(|| {
                ToolError::model(
                    "write_file: missing required field 'path'. Call write_file again with both \
                     'path' and 'content' set.",
                )
            })?;
            let content = match args.get("content") {
                None => {
                    return Err(ToolError::model(
                        "write_file: missing required field 'content'. The call had a path but \
                         no content (often an argument dropped under context pressure). Call \
                         write_file again with the full content.",
                    ));
                }
                Some(Value::String(s)) => s.clone(),
                Some(other) => {
                    return Err(ToolError::model(format!(
                        "write_file: 'content' must be a string, got {}.",
                        json_type_name(other)
                    )));
                }
            };
            let raw_path = raw_path.to_owned();
            let path = ctx.resolve(&raw_path);
            if let Err(refused) = ctx.approve_write("write_file", &path).await {
                return Ok(refused);
            }
            let homes = ctx.homes.clone();
            if let Some(files) = &ctx.client_files {
                refuse(&super::file_io::HostIo, &homes, &path, &raw_path, &content)?;
                let created = !path.exists();
                match files.write(&path, &content).await {
                    Ok(true) => {
                        let resolved = path.display().to_string();
                        return Ok(json!({
                            "bytes_written": content.len(),
                            "dirs_created": created && path.parent().is_some_and(|p| !p.exists()),
                            "resolved_path": resolved,
                            "files_modified": [resolved],
                            "written_by": "editor",
                        })
                        .to_string());
                    }
                    Ok(false) => {}
                    Err(e) => {
                        return Err(ToolError::model(format!(
                            "The editor could not write {raw_path}: {e}"
                        )));
                    }
                }
            }
            let io = super::file_io::for_context(ctx);
            tokio::task::spawn_blocking(move || {
                write(io.as_ref(), &homes, &path, &raw_path, &content)
            })
            .await
            .map_err(|e| ToolError::Fatal(format!("write_file task failed: {e}")))?
        })
    }
}

fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Why `content` must not be written to `path`, if it must not.
fn refuse(
    io: &dyn FileIo,
    homes: &Homes,
    path: &Path,
    shown: &str,
    content: &str,
) -> Result<(), ToolError> {
    if let Some(msg) = guard::write_denied(homes, path, shown) {
        return Err(ToolError::model(msg));
    }
    if looks_like_numbered_read_output(content) {
        return Err(ToolError::model(
            "Refusing to write read_file display text (LINE_NUM|CONTENT) as file content. Strip \
             the line-number prefixes and write the real file contents.",
        ));
    }
    if let Some(msg) = syntax_gate(path, content) {
        return Err(ToolError::model(msg));
    }
    if matches!(io.kind(path), Ok(Some(Kind::Dir))) {
        return Err(ToolError::model(format!(
            "{shown} is a directory. Give write_file the path of a file inside it."
        )));
    }
    Ok(())
}

fn write(io: &dyn FileIo, homes: &Homes, path: &Path, shown: &str, content: &str) -> ToolResult {
    refuse(io, homes, path, shown, content)?;
    // Keep the existing file's BOM and CRLF conventions across the rewrite.
    let (bom, crlf) = match io.read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let file = fsio::TextFile::from_raw(&text);
            (file.bom, file.crlf)
        }
        Err(_) => (false, false),
    };
    let rendered = fsio::render_with(content, bom, crlf);
    let dirs_created = io
        .write(path, rendered.as_bytes())
        .map_err(|e| ToolError::model(format!("Failed to write {shown}: {e}")))?;
    let resolved = path.display().to_string();
    Ok(json!({
        "bytes_written": rendered.len(),
        "dirs_created": dirs_created,
        "resolved_path": resolved,
        "files_modified": [resolved],
    })
    .to_string())
}

/// Refuses structured files whose new content does not parse (nothing is written).
pub(crate) fn syntax_gate(path: &Path, content: &str) -> Option<String> {
    let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
    if ext != "json" {
        return None;
    }
    let body = content.strip_prefix(fsio::BOM).unwrap_or(content);
    match serde_json::from_str::<Value>(body) {
        Ok(_) => None,
        Err(e) => Some(format!(
            "Refusing to write '{}': the new content is not valid JSON ({e}). The file was NOT \
             created or modified. Fix the content and retry.",
            path.display()
        )),
    }
}

/// True when `content` is dominated by consecutive `N|text` lines, i.e. read_file
/// output echoed back instead of the real file text.
pub(crate) fn looks_like_numbered_read_output(content: &str) -> bool {
    let lines: Vec<&str> = content.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() < 2 {
        return false;
    }
    let numbered: Vec<u64> = lines
        .iter()
        .filter_map(|l| {
            let (prefix, _) = l.trim_start().split_once('|')?;
            if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            prefix.parse().ok()
        })
        .collect();
    if numbered.len() < 2 || (numbered.len() as f64) / (lines.len() as f64) < 0.6 {
        return false;
    }
    numbered.windows(2).all(|w| w[1] == w[0] + 1)
}

#[cfg(test)]
#[path = "write_file_tests.rs"]
mod tests;
