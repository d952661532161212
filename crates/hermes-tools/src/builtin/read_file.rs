//! `read_file`: paginated, line-numbered reads of text files.

pub(crate) mod support;

use crate::Homes;
use std::io::{BufRead, BufReader};
use std::path::Path;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use serde_json::{Map, Value, json};

use crate::builtin::write_file::guard;
use crate::{ParallelClass, Tool, ToolContext, ToolError, ToolResult, arg_i64, require_str};

/// Default and maximum number of lines per read.
const DEFAULT_LIMIT: i64 = 500;
const MAX_LIMIT: i64 = 2_000;
/// Lines longer than this (in characters) are cut.
const MAX_LINE_CHARS: usize = 2_000;
/// Budget for the numbered content of one read, in characters.
const MAX_READ_CHARS: usize = 100_000;
/// Above this file size, unbounded reads get a nudge toward narrower ones.
const LARGE_FILE_BYTES: u64 = 512_000;

/// The `read_file` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFileTool;

impl Tool for ReadFileTool {
    fn name(&self) -> &str {
        "read_file"
    }

    fn toolset(&self) -> &str {
        "file"
    }

    fn emoji(&self) -> &str {
        "📖"
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "read_file".into(),
            description: "Read a text file with line numbers, a page at a time. Prefer this over \
                cat/head/tail in the terminal. Each line is shown as 'LINE_NUM|CONTENT'. If the \
                file does not exist, similar names are suggested. Use offset and limit to page \
                through large files; a read over ~100K characters is cut at a line boundary and \
                returns next_offset to continue from. Jupyter notebooks (.ipynb) are shown as \
                their cells. Images and other binary files cannot be read (use vision_analyze \
                for images)."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File to read (absolute, relative to the working \
                            directory, or ~/path)"
                    },
                    "offset": {
                        "type": "integer",
                        "description": "First line to return, counting from 1 (default: 1)",
                        "default": 1,
                        "minimum": 1
                    },
                    "limit": {
                        "type": "integer",
                        "description": "How many lines to return at most (default: 500, max: 2000)",
                        "default": 500,
                        "maximum": 2000
                    }
                },
                "required": ["path"]
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
            let shown = require_str(&args, "read_file", "path")?.trim().to_owned();
            if shown.is_empty() {
                return Err(ToolError::model(
                    "read_file: 'path' is empty. Pass the file to read.",
                ));
            }
            let offset = arg_i64(&args, "offset").unwrap_or(1).max(1) as usize;
            let limit = arg_i64(&args, "limit")
                .unwrap_or(DEFAULT_LIMIT)
                .clamp(1, MAX_LIMIT) as usize;
            let path = ctx.resolve(&shown);
            let homes = ctx.homes.clone();
            if let Some(files) = &ctx.client_files
                && !guard::is_blocked_device(&path)
                && guard::read_blocked(&homes, &path, &shown).is_none()
                && support::binary_extension(&path).is_none()
                && let Some(text) = files.read(&path).await
            {
                let mut page = paginate(text.lines().map(str::to_owned), offset, limit);
                page.file_size = text.len() as u64;
                return Ok(Value::Object(page.into_json(&shown, offset, limit)).to_string());
            }
            if !ctx.env.is_host() {
                // The session's environment (sandbox, ssh): its files, not the host's.
                let io = super::file_io::for_context(ctx);
                return tokio::task::spawn_blocking(move || {
                    read_via(io.as_ref(), &homes, &path, &shown, offset, limit)
                })
                .await
                .map_err(|e| ToolError::Fatal(format!("read_file task failed: {e}")))?;
            }
            tokio::task::spawn_blocking(move || read(&homes, &path, &shown, offset, limit))
                .await
                .map_err(|e| ToolError::Fatal(format!("read_file task failed: {e}")))?
        })
    }
}

/// Devices that never end and credential files are not read, wherever they are.
fn refuse_read(homes: &Homes, path: &Path, shown: &str) -> Result<(), ToolError> {
    if guard::is_blocked_device(path) {
        return Err(ToolError::model(format!(
            "Cannot read '{shown}': it is a device or process file that would block, never end, \
             or expose process secrets."
        )));
    }
    match guard::read_blocked(homes, path, shown) {
        Some(msg) => Err(ToolError::model(msg)),
        None => Ok(()),
    }
}

fn read(homes: &Homes, path: &Path, shown: &str, offset: usize, limit: usize) -> ToolResult {
    refuse_read(homes, path, shown)?;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found(path, shown)),
        Err(e) => return Err(ToolError::model(format!("Cannot read {shown}: {e}"))),
    };
    if meta.is_dir() {
        return Err(ToolError::model(format!(
            "{shown} is a directory, not a file. To list it, use search_files with \
             target='files', pattern='*' and path='{shown}'."
        )));
    }
    let is_notebook = path
        .extension()
        .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case("ipynb"));
    if is_notebook
        && let Ok(raw) = std::fs::read(path)
        && let Some(text) = support::notebook_text(&raw)
    {
        let lines = text.lines().map(str::to_owned);
        let mut page = paginate(lines, offset, limit);
        page.file_size = meta.len();
        let mut obj = page.into_json(shown, offset, limit);
        obj.insert("extracted_document".into(), json!(true));
        return Ok(Value::Object(obj).to_string());
    }
    if let Some(ext) = support::binary_extension(path) {
        return Err(ToolError::model(format!(
            "Cannot read binary file '{shown}' (.{ext}). Use vision_analyze for images, or the \
             terminal to inspect binary files."
        )));
    }
    let file = std::fs::File::open(path)
        .map_err(|e| ToolError::model(format!("Cannot read {shown}: {e}")))?;
    let mut reader = BufReader::new(file);
    let sample = reader
        .fill_buf()
        .map_err(|e| ToolError::model(format!("Cannot read {shown}: {e}")))?;
    if support::looks_binary(&sample[..sample.len().min(8192)]) {
        return Err(ToolError::model(format!(
            "{shown} is a binary file and cannot be shown as text. Use the terminal (e.g. file, \
             xxd, strings) to inspect it."
        )));
    }
    let lines = LineIter {
        reader,
        buf: Vec::new(),
    };
    let mut page = paginate(lines, offset, limit);
    page.file_size = meta.len();
    Ok(Value::Object(page.into_json(shown, offset, limit)).to_string())
}

/// [`read`] through a file view other than the host's disk (the whole file is fetched).
fn read_via(
    io: &dyn super::file_io::FileIo,
    homes: &Homes,
    path: &Path,
    shown: &str,
    offset: usize,
    limit: usize,
) -> ToolResult {
    refuse_read(homes, path, shown)?;
    let bytes = match io.read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::model(format!(
                "File not found: {shown}. Check the path with search_files or the terminal."
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
            return Err(ToolError::model(format!(
                "{shown} is a directory, not a file. To list it, use search_files with \
                 target='files', pattern='*' and path='{shown}'."
            )));
        }
        Err(e) => return Err(ToolError::model(format!("Cannot read {shown}: {e}"))),
    };
    if let Some(ext) = support::binary_extension(path) {
        return Err(ToolError::model(format!(
            "Cannot read binary file '{shown}' (.{ext}). Use the terminal to inspect binary files."
        )));
    }
    if support::looks_binary(&bytes[..bytes.len().min(8192)]) {
        return Err(ToolError::model(format!(
            "{shown} is a binary file and cannot be shown as text. Use the terminal (e.g. file, \
             xxd, strings) to inspect it."
        )));
    }
    let size = bytes.len() as u64;
    let lines = LineIter {
        reader: std::io::Cursor::new(bytes),
        buf: Vec::new(),
    };
    let mut page = paginate(lines, offset, limit);
    page.file_size = size;
    Ok(Value::Object(page.into_json(shown, offset, limit)).to_string())
}

/// Lines of a reader, lossily decoded, without their terminators.
struct LineIter<R> {
    reader: R,
    buf: Vec<u8>,
}

impl<R: BufRead> Iterator for LineIter<R> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        self.buf.clear();
        match self.reader.read_until(b'\n', &mut self.buf) {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                let mut end = self.buf.len();
                if self.buf[..end].ends_with(b"\n") {
                    end -= 1;
                }
                if self.buf[..end].ends_with(b"\r") {
                    end -= 1;
                }
                Some(String::from_utf8_lossy(&self.buf[..end]).into_owned())
            }
        }
    }
}

/// One page of a file.
#[derive(Debug, Default)]
struct Page {
    content: String,
    /// Characters in `content`.
    chars: usize,
    /// Lines included in `content`.
    shown: usize,
    total_lines: usize,
    file_size: u64,
    /// Cut short by the character budget.
    budget_cut: bool,
    /// The first line alone exceeded the budget.
    first_line_clamped: bool,
}

fn paginate(lines: impl Iterator<Item = String>, offset: usize, limit: usize) -> Page {
    let mut page = Page::default();
    let end = offset + limit - 1;
    for (i, line) in lines.enumerate() {
        let n = i + 1;
        page.total_lines = n;
        if n < offset || n > end || page.budget_cut {
            continue;
        }
        let line = if n == 1 {
            line.strip_prefix('\u{feff}').unwrap_or(&line).to_owned()
        } else {
            line
        };
        let line = match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{}... [truncated]", &line[..cut]),
            None => line,
        };
        let rendered = format!("{n}|{line}");
        let sep = usize::from(!page.content.is_empty());
        let adding = rendered.chars().count() + sep;
        if page.chars + adding > MAX_READ_CHARS {
            page.budget_cut = true;
            if page.shown == 0 {
                page.content = rendered.chars().take(MAX_READ_CHARS).collect();
                page.shown = 1;
                page.first_line_clamped = true;
            }
            continue;
        }
        if sep == 1 {
            page.content.push('\n');
        }
        page.content.push_str(&rendered);
        page.chars += adding;
        page.shown += 1;
    }
    page
}

impl Page {
    fn into_json(self, shown: &str, offset: usize, limit: usize) -> Map<String, Value> {
        let mut obj = Map::new();
        let end = offset + limit - 1;
        let truncated = self.budget_cut || self.total_lines > end;
        obj.insert("path".into(), json!(shown));
        obj.insert("content".into(), json!(self.content));
        obj.insert("total_lines".into(), json!(self.total_lines));
        obj.insert("file_size".into(), json!(self.file_size));
        obj.insert("truncated".into(), json!(truncated));
        if self.budget_cut {
            let next = offset + self.shown;
            let mut hint = format!(
                "Output truncated at the {MAX_READ_CHARS}-character read budget after {} line(s) \
                 (showing lines {offset}-{} of {}). Use offset={next} to continue.",
                self.shown,
                next - 1,
                self.total_lines
            );
            if self.first_line_clamped {
                hint.push_str(
                    " Note: the first line alone exceeded the budget and was cut mid-line; the \
                     rest of that line cannot be read with offset.",
                );
            }
            obj.insert("truncated_by".into(), json!("bytes"));
            obj.insert("next_offset".into(), json!(next));
            obj.insert("hint".into(), json!(hint));
        } else if truncated {
            obj.insert("next_offset".into(), json!(end + 1));
            obj.insert(
                "hint".into(),
                json!(format!(
                    "Use offset={} to continue reading (showing {offset}-{end} of {} lines)",
                    end + 1,
                    self.total_lines
                )),
            );
        } else if offset > self.total_lines && self.total_lines > 0 {
            obj.insert(
                "hint".into(),
                json!(format!(
                    "offset={offset} is past the end of the file ({} lines). Use a smaller offset.",
                    self.total_lines
                )),
            );
        }
        if truncated && self.file_size > LARGE_FILE_BYTES && limit > 200 {
            obj.insert(
                "_hint".into(),
                json!(format!(
                    "This file is large ({} bytes). Read only the section you need with offset \
                     and limit to keep context usage down.",
                    self.file_size
                )),
            );
        }
        obj
    }
}

fn not_found(path: &Path, shown: &str) -> ToolError {
    let parent = path.parent().unwrap_or(path);
    if !parent.is_dir() {
        return ToolError::model(format!(
            "File not found: {shown} (the directory {} does not exist either).",
            parent.display()
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let similar = support::similar_files(parent, &name);
    if similar.is_empty() {
        ToolError::model(format!("File not found: {shown}"))
    } else {
        ToolError::model(format!(
            "File not found: {shown}. Similar files: {}",
            similar.join(", ")
        ))
    }
}

#[cfg(test)]
#[path = "read_file_tests.rs"]
mod tests;
