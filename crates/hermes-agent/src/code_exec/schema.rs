//! The model-facing `execute_code` schema. The text matches the reference's
//! `build_execute_code_schema` word for word because models are tuned on it.

use std::collections::BTreeSet;

use hermes_protocol::ToolSchema;
use serde_json::json;

use super::ExecMode;

/// Per-tool documentation lines, in the reference's display order.
const TOOL_DOC_LINES: &[(&str, &str)] = &[
    (
        "web_search",
        "  web_search(query: str, limit: int = 5) -> dict\n    Returns {\"data\": {\"web\": [{\"url\", \"title\", \"description\"}, ...]}}",
    ),
    (
        "web_extract",
        "  web_extract(urls: list[str], char_limit: int = None) -> dict\n    Returns {\"results\": [{\"url\", \"title\", \"content\", \"error\"}, ...]} where content is markdown.\n    No LLM summarization. Pages over char_limit (default 15000) are head+tail truncated; full text stored on disk (path in the content footer).",
    ),
    (
        "read_file",
        "  read_file(path: str, offset: int = 1, limit: int = 500) -> dict\n    Lines are 1-indexed. Returns {\"content\": \"...\", \"total_lines\": N}",
    ),
    (
        "write_file",
        "  write_file(path: str, content: str) -> dict\n    Always overwrites the entire file.",
    ),
    (
        "search_files",
        "  search_files(pattern: str, target=\"content\", path=\".\", file_glob=None, limit=50) -> dict\n    target: \"content\" (search inside files) or \"files\" (find files by name). Returns {\"matches\": [...]}",
    ),
    (
        "patch",
        "  patch(path: str, old_string: str, new_string: str, replace_all: bool = False) -> dict\n    Replaces old_string with new_string in the file.",
    ),
    (
        "terminal",
        "  terminal(command: str, timeout=None, workdir=None) -> dict\n    Foreground only (no background/pty). Returns {\"output\": \"...\", \"exit_code\": N}",
    ),
];

/// The schema listing only `sandbox_tools`, with the working-directory note for `mode`.
pub fn build_schema(sandbox_tools: &BTreeSet<String>, mode: ExecMode) -> ToolSchema {
    let tool_lines = TOOL_DOC_LINES
        .iter()
        .filter(|(name, _)| sandbox_tools.contains(*name))
        .map(|(_, doc)| *doc)
        .collect::<Vec<_>>()
        .join("\n");

    let mut import_examples: Vec<&str> = ["web_search", "terminal"]
        .into_iter()
        .filter(|n| sandbox_tools.contains(*n))
        .collect();
    if import_examples.is_empty() {
        // BTreeSet iterates sorted, as the reference's `sorted(...)[:2]`.
        import_examples = sandbox_tools.iter().take(2).map(String::as_str).collect();
    }
    let import_str = if import_examples.is_empty() {
        "...".to_owned()
    } else {
        format!("{}, ...", import_examples.join(", "))
    };

    let cwd_note = match mode {
        ExecMode::Strict => {
            "Scripts run in their own temp dir, not the session's CWD — use absolute paths \
             (os.path.expanduser('~/.hermes/.env')) or terminal()/read_file() for user files."
        }
        ExecMode::Project => {
            "Scripts run in the session's working directory with the active venv's python, \
             so project deps (pandas, etc.) and relative paths work like in terminal()."
        }
    };

    let description = format!(
        "Run a Python script that can call Hermes tools programmatically. \
         Use this when you need 3+ tool calls with processing logic between them, \
         need to filter/reduce large tool outputs before they enter your context, \
         need conditional branching (if X then Y else Z), or need to loop \
         (fetch N pages, process N files, retry on failure).\n\n\
         Use normal tool calls instead when: single tool call with no processing, \
         you need to see the full result and apply complex reasoning, \
         or the task requires interactive user input.\n\n\
         Available via `from hermes_tools import ...`:\n\n\
         {tool_lines}\n\n\
         Limits: 5-minute timeout, 50KB stdout cap, max 50 tool calls per script. \
         terminal() is foreground-only (no background or pty).\n\n\
         {cwd_note}\n\n\
         Print your final result to stdout. Use Python stdlib (json, re, math, csv, \
         datetime, collections, etc.) for processing between tool calls.\n\n\
         Also available (no import needed — built into hermes_tools):\n  \
         json_parse(text: str) — json.loads with strict=False; use for terminal() output with control chars\n  \
         shell_quote(s: str) — shlex.quote(); use when interpolating dynamic strings into shell commands\n  \
         retry(fn, max_attempts=3, delay=2) — retry with exponential backoff for transient failures"
    );

    ToolSchema {
        name: "execute_code".into(),
        description,
        parameters: json!({
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": format!(
                        "Python code to execute. Import tools with \
                         `from hermes_tools import {import_str}` \
                         and print your final result to stdout."
                    ),
                },
            },
            "required": ["code"],
        }),
    }
}
