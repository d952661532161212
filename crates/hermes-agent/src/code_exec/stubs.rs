//! Generates `hermes_tools.py`, the module a sandbox script imports to call tools.
//! The functions scripts use have the reference's names and signatures (tool stubs,
//! `json_parse`, `shell_quote`, `retry`), so scripts written for it run here; the
//! transport underneath is ours.

use std::collections::BTreeSet;

/// The Unix-socket transport plus the `json_parse`/`shell_quote`/`retry` helpers.
const HEADER: &str = include_str!("hermes_tools_header.py");

/// The tools a sandbox script may call (the reference's `SANDBOX_ALLOWED_TOOLS`).
pub const SANDBOX_ALLOWED_TOOLS: &[&str] = &[
    "web_search",
    "web_extract",
    "read_file",
    "write_file",
    "search_files",
    "patch",
    "terminal",
];

/// One stub: signature, docstring, and the Python expression building the args dict.
struct Stub {
    name: &'static str,
    signature: &'static str,
    doc: &'static str,
    args: &'static str,
}

const STUBS: &[Stub] = &[
    Stub {
        name: "web_search",
        signature: "query: str, limit: int = 5",
        doc: r#""""Search the web. Returns dict with data.web list of {url, title, description}.""""#,
        args: r#"{"query": query, "limit": limit}"#,
    },
    Stub {
        name: "web_extract",
        signature: "urls: list, char_limit: int = None",
        doc: r#""""Extract content from URLs (no LLM summarization). Returns dict with results list of {url, title, content, error}. Pages over char_limit (default 15000) are head+tail truncated with the full text stored on disk; the content footer gives the path. content is markdown.""""#,
        args: r#"{"urls": urls, "char_limit": char_limit}"#,
    },
    Stub {
        name: "read_file",
        signature: "path: str, offset: int = 1, limit: int = 500",
        doc: r#""""Read a file (1-indexed lines). Returns dict with "content" and "total_lines".""""#,
        args: r#"{"path": path, "offset": offset, "limit": limit}"#,
    },
    Stub {
        name: "write_file",
        signature: "path: str, content: str, cross_profile: bool = False",
        doc: r#""""Write content to a file (always overwrites). Returns dict with status. cross_profile=True opts out of the cross-Hermes-profile soft guard.""""#,
        args: r#"{"path": path, "content": content, "cross_profile": cross_profile}"#,
    },
    Stub {
        name: "search_files",
        signature: r#"pattern: str, target: str = "content", path: str = ".", file_glob: str = None, limit: int = 50, offset: int = 0, output_mode: str = "content", context: int = 0"#,
        doc: r#""""Search file contents (target="content") or find files by name (target="files"). Returns dict with "matches".""""#,
        args: r#"{"pattern": pattern, "target": target, "path": path, "file_glob": file_glob, "limit": limit, "offset": offset, "output_mode": output_mode, "context": context}"#,
    },
    Stub {
        name: "patch",
        signature: r#"path: str = None, old_string: str = None, new_string: str = None, replace_all: bool = False, mode: str = "replace", patch: str = None, cross_profile: bool = False"#,
        doc: r#""""Targeted find-and-replace (mode="replace") or V4A multi-file patches (mode="patch"). Returns dict with status. cross_profile=True opts out of the cross-Hermes-profile soft guard.""""#,
        args: r#"{"path": path, "old_string": old_string, "new_string": new_string, "replace_all": replace_all, "mode": mode, "patch": patch, "cross_profile": cross_profile}"#,
    },
    Stub {
        name: "terminal",
        signature: "command: str, timeout: int = None, workdir: str = None",
        doc: r#""""Run a shell command (foreground only). Returns dict with "output" and "exit_code".""""#,
        args: r#"{"command": command, "timeout": timeout, "workdir": workdir}"#,
    },
];

/// `enabled` ∩ the allow-list, sorted.
pub fn sandbox_tools<'a>(enabled: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    enabled
        .into_iter()
        .filter(|n| SANDBOX_ALLOWED_TOOLS.contains(n))
        .map(str::to_owned)
        .collect()
}

/// The source of `hermes_tools.py` with one stub per tool in `tools` that has one.
pub fn generate_module(tools: &BTreeSet<String>) -> String {
    let stubs: Vec<String> = tools
        .iter()
        .filter_map(|name| STUBS.iter().find(|s| s.name == name))
        .map(|s| {
            format!(
                "def {name}({sig}):\n    {doc}\n    return _call('{name}', {args})\n",
                name = s.name,
                sig = s.signature,
                doc = s.doc,
                args = s.args,
            )
        })
        .collect();
    format!("{HEADER}{}", stubs.join("\n"))
}
