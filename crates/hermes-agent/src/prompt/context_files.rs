//! Project context files (`.hermes.md`, `AGENTS.md`, `CLAUDE.md`,
//! `.cursorrules`) and the user's `SOUL.md`: discovery, injection scanning and
//! the per-file size cap.

use std::path::{Path, PathBuf};

use hermes_tools::injection;

/// Characters one context source may contribute before it is cut.
pub const MAX_CHARS: usize = 20_000;
/// Share of [`MAX_CHARS`] kept from the start of an oversized file.
const HEAD_RATIO: f64 = 0.7;
/// Share of [`MAX_CHARS`] kept from the end of an oversized file.
const TAIL_RATIO: f64 = 0.2;

const HERMES_MD_NAMES: [&str; 2] = [".hermes.md", "HERMES.md"];
const AGENTS_MD_NAMES: [&str; 2] = ["AGENTS.md", "agents.md"];
const CLAUDE_MD_NAMES: [&str; 2] = ["CLAUDE.md", "claude.md"];

/// One loaded source, ready to paste into the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// The text to include (already scanned and capped).
    pub text: String,
    /// Problems worth telling the user about: blocked or truncated files.
    pub warnings: Vec<String>,
}

/// The project context for `cwd`: the first source type found wins, in the
/// order `.hermes.md`/`HERMES.md` (up to the git root), `AGENTS.md`,
/// `CLAUDE.md`, then `.cursorrules` plus `.cursor/rules/*.mdc`.
pub fn load_project_context(cwd: &Path) -> Option<Loaded> {
    load_hermes_md(cwd)
        .or_else(|| load_named(cwd, &AGENTS_MD_NAMES))
        .or_else(|| load_named(cwd, &CLAUDE_MD_NAMES))
        .or_else(|| load_cursor_rules(cwd))
}

/// `SOUL.md` from HERMES_HOME, scanned and capped; `None` when absent or blank.
pub fn load_soul(hermes_home: &Path) -> Option<Loaded> {
    let path = hermes_home.join("SOUL.md");
    let content = read_trimmed(&path)?;
    let mut warnings = Vec::new();
    let text = scan_or_block(&content, "SOUL.md", &mut warnings);
    let text = cap(&text, "SOUL.md", &path, &mut warnings);
    Some(Loaded { text, warnings })
}

/// Whether `text` is the placeholder left for a blocked file.
pub fn is_blocked(text: &str) -> bool {
    text.starts_with("[BLOCKED: ")
}

fn load_hermes_md(cwd: &Path) -> Option<Loaded> {
    let path = find_hermes_md(cwd)?;
    let content = read_trimmed(&path)?;
    let content = strip_frontmatter(&content);
    // A file in a parent directory is named by its file name: a `../` path
    // reads as an instruction to go looking elsewhere.
    let label = path
        .strip_prefix(cwd)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| file_name(&path));
    let mut warnings = Vec::new();
    let body = scan_or_block(content, &label, &mut warnings);
    let text = cap(
        &format!("## {label}\n\n{body}"),
        &label,
        &path,
        &mut warnings,
    );
    Some(Loaded { text, warnings })
}

/// Nearest `.hermes.md`/`HERMES.md` from `cwd` up to the git root; only `cwd`
/// itself outside a repository, so a stray file in `/tmp` or `$HOME` is never
/// picked up.
fn find_hermes_md(cwd: &Path) -> Option<PathBuf> {
    let git_root = find_git_root(cwd);
    for dir in cwd.ancestors() {
        for name in HERMES_MD_NAMES {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
        if git_root.as_deref().is_none_or(|root| root == dir) {
            break;
        }
    }
    None
}

fn find_git_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The first of `names` in `cwd` that has content (cwd only, no walk).
fn load_named(cwd: &Path, names: &[&str]) -> Option<Loaded> {
    names.iter().find_map(|name| {
        let path = cwd.join(name);
        let content = read_trimmed(&path)?;
        let mut warnings = Vec::new();
        let body = scan_or_block(&content, name, &mut warnings);
        let text = cap(&format!("## {name}\n\n{body}"), name, &path, &mut warnings);
        Some(Loaded { text, warnings })
    })
}

/// `.cursorrules` and every `.cursor/rules/*.mdc` (sorted), capped together.
fn load_cursor_rules(cwd: &Path) -> Option<Loaded> {
    let mut sources: Vec<(String, String)> = Vec::new();
    if let Some(content) = read_trimmed(&cwd.join(".cursorrules")) {
        sources.push((".cursorrules".into(), content));
    }
    let rules_dir = cwd.join(".cursor").join("rules");
    if let Ok(entries) = std::fs::read_dir(&rules_dir) {
        let mut mdc: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "mdc"))
            .collect();
        mdc.sort();
        for path in mdc {
            if let Some(content) = read_trimmed(&path) {
                sources.push((format!(".cursor/rules/{}", file_name(&path)), content));
            }
        }
    }
    if sources.is_empty() {
        return None;
    }
    let mut warnings = Vec::new();
    let joined = sources
        .iter()
        .map(|(label, content)| {
            let body = scan_or_block(content, label, &mut warnings);
            format!("## {label}\n\n{body}")
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    let text = cap(
        &joined,
        ".cursorrules",
        &cwd.join(".cursorrules"),
        &mut warnings,
    );
    Some(Loaded { text, warnings })
}

/// The file's text without surrounding whitespace; `None` when missing,
/// unreadable (a directory, not UTF-8) or blank.
fn read_trimmed(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// Drops a leading `---` YAML block: it is configuration, not instructions.
fn strip_frontmatter(content: &str) -> &str {
    let content = content.trim_start_matches('\u{FEFF}');
    let Some(rest) = content.strip_prefix("---") else {
        return content;
    };
    match rest.find("\n---") {
        Some(end) => {
            let body = rest[end + 4..].trim_start_matches('\n');
            if body.is_empty() { content } else { body }
        }
        None => content,
    }
}

/// The content, or a one-line placeholder when the scanner flags it. A
/// leading byte-order mark is an editor artefact, not an attack, so it goes
/// before scanning.
fn scan_or_block(content: &str, label: &str, warnings: &mut Vec<String>) -> String {
    let content = content.strip_prefix('\u{FEFF}').unwrap_or(content);
    match injection::scan(content).or_else(|| scan_tail(content)) {
        None => content.to_owned(),
        Some(threat) => {
            warnings.push(format!(
                "context file {label} blocked: possible prompt injection ({threat})"
            ));
            format!(
                "[BLOCKED: {label} looked like a prompt-injection attempt ({}: {:?}); its content was not loaded.]",
                threat.kind, threat.excerpt
            )
        }
    }
}

/// The scanner reads only the head of a long text, but the cap keeps the
/// file's tail too: that tail must not reach the prompt unscanned.
fn scan_tail(content: &str) -> Option<injection::Threat> {
    let total = content.chars().count();
    if total <= injection::MAX_SCAN_CHARS {
        return None;
    }
    let start = content
        .char_indices()
        .nth(total - injection::MAX_SCAN_CHARS)
        .map_or(0, |(i, _)| i);
    injection::scan(&content[start..])
}

/// Keeps the head and tail of an oversized source with a marker in between
/// that tells the model where to read the whole file.
fn cap(text: &str, label: &str, path: &Path, warnings: &mut Vec<String>) -> String {
    let total = text.chars().count();
    if total <= MAX_CHARS {
        return text.to_owned();
    }
    let head_chars = (MAX_CHARS as f64 * HEAD_RATIO) as usize;
    let tail_chars = (MAX_CHARS as f64 * TAIL_RATIO) as usize;
    warnings.push(format!(
        "context file {label} truncated: {total} characters exceed the limit of {MAX_CHARS}"
    ));
    let head: String = text.chars().take(head_chars).collect();
    let tail: String = text.chars().skip(total - tail_chars).collect();
    format!(
        "{head}\n\n[… {label} truncated: showing the first {head_chars} and last {tail_chars} of {total} characters. \
The middle is left out; read the whole file with read_file if you need it: {}]\n\n{tail}",
        path.display()
    )
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "context_files_tests.rs"]
mod tests;
