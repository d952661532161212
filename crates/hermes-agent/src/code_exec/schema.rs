//! The model-facing `execute_code` schema: the reference's parameters and
//! function signatures, described in our own words with this session's limits.

use std::collections::BTreeSet;

use hermes_protocol::ToolSchema;
use serde_json::json;

use super::{CodeExecSettings, ExecMode};

/// How each sandbox function is listed: the signature scripts call (the
/// reference's, so scripts written for it run here) and what it returns.
const TOOL_DOC_LINES: &[(&str, &str)] = &[
    (
        "web_search",
        "  web_search(query: str, limit: int = 5) -> dict\n    {\"data\": {\"web\": [{\"url\", \"title\", \"description\"}, ...]}}",
    ),
    (
        "web_extract",
        "  web_extract(urls: list[str], char_limit: int = None) -> dict\n    {\"results\": [{\"url\", \"title\", \"content\", \"error\"}, ...]}; content is markdown, pages longer than char_limit (15000 by default) keep their start and end.",
    ),
    (
        "read_file",
        "  read_file(path: str, offset: int = 1, limit: int = 500) -> dict\n    {\"content\": \"...\", \"total_lines\": N}; offset counts lines from 1.",
    ),
    (
        "write_file",
        "  write_file(path: str, content: str) -> dict\n    Replaces the whole file.",
    ),
    (
        "search_files",
        "  search_files(pattern: str, target=\"content\", path=\".\", file_glob=None, limit=50) -> dict\n    target=\"content\" greps inside files, target=\"files\" matches file names; {\"matches\": [...]}",
    ),
    (
        "patch",
        "  patch(path: str, old_string: str, new_string: str, replace_all: bool = False) -> dict\n    Swaps old_string for new_string in the file.",
    ),
    (
        "terminal",
        "  terminal(command: str, timeout=None, workdir=None) -> dict\n    Runs in the foreground (no background or pty); {\"output\": \"...\", \"exit_code\": N}",
    ),
];

/// The schema for this session: only `sandbox_tools` are listed, and the
/// limits and working directory are the configured ones.
pub fn build_schema(sandbox_tools: &BTreeSet<String>, settings: &CodeExecSettings) -> ToolSchema {
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
        import_examples = sandbox_tools.iter().take(2).map(String::as_str).collect();
    }
    let import_str = if import_examples.is_empty() {
        "...".to_owned()
    } else {
        format!("{}, ...", import_examples.join(", "))
    };

    let cwd_note = match settings.mode {
        ExecMode::Strict => {
            "The script starts in a private temporary directory, not the session's: give \
             absolute paths, or reach the user's files through read_file()/terminal()."
        }
        ExecMode::Project => {
            "The script starts in the session's working directory with the active \
             virtualenv's python, so relative paths and the project's packages work as \
             they do in terminal()."
        }
    };

    let description = format!(
        "Runs a Python 3 script whose `hermes_tools` functions call your tools, so one \
         call can do many tool steps and only what the script prints comes back to you. \
         Reach for it when a job takes three or more tool calls with logic in between, \
         when a big output should be filtered, counted or condensed before you read it, \
         when the next step depends on a result, or when you loop over files, pages or \
         retries.\n\n\
         Call the tool directly instead for a single call, when you need to read a whole \
         result yourself, or when the user has to answer something.\n\n\
         Functions (`from hermes_tools import ...`):\n\n\
         {tool_lines}\n\n\
         Also in hermes_tools: json_parse(text) parses JSON that holds raw control \
         characters (terminal output often does); shell_quote(s) quotes a value for a \
         terminal() command line; retry(fn, max_attempts=3, delay=2) calls fn again with \
         doubling waits when it raises.\n\n\
         Limits: the script is stopped after {timeout} s, stdout beyond 50 KB loses its \
         middle, and it may make {calls} tool calls. terminal() runs in the foreground \
         only.\n\n\
         {cwd_note}\n\n\
         Print the result you want to see. The standard library (json, re, csv, math, \
         datetime, collections, ...) is there for the work between tool calls.",
        timeout = settings.timeout_display(),
        calls = settings.max_tool_calls,
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
                        "The Python script. Import what it needs with \
                         `from hermes_tools import {import_str}` and print the result."
                    ),
                },
            },
            "required": ["code"],
        }),
    }
}
