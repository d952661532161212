//! Changing a few keys of one top-level section of `config.yaml` in place.
//!
//! The reference rewrites the whole file from its parsed form, which drops the user's
//! comments and ordering. Here only the lines of the keys being set change; everything
//! else, comments included, stays byte for byte. The result is parsed before it is
//! written, so a file is never left unreadable.

use std::path::Path;

/// Why the file could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigEditError {
    /// Reading or writing failed.
    #[error("cannot update {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The section is written in a form this editor does not rewrite (flow style).
    #[error(
        "{path}: the `{section}:` section is written as an inline mapping; change it by hand \
         (or rewrite it as an indented block) and try again"
    )]
    Unsupported {
        /// The file.
        path: String,
        /// The section.
        section: String,
    },
    /// The edited text would not parse (the original is left untouched).
    #[error("{path}: the edit would leave invalid YAML ({message}); the file was not changed")]
    Invalid {
        /// The file.
        path: String,
        /// Parser message.
        message: String,
    },
}

/// A scalar as YAML: plain when that reads back as the same string, else double-quoted.
fn yaml_scalar(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-+@".contains(c) || c == ':')
        && value
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && !value.contains(": ")
        && !value.ends_with(':')
        && !matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        )
        && value.parse::<f64>().is_err();
    if plain {
        value.to_owned()
    } else {
        serde_json::Value::String(value.to_owned()).to_string()
    }
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// Whether `line` (already known to be at the key's indent) sets `key`.
fn sets_key(line: &str, key: &str) -> bool {
    let t = line.trim_start();
    t.strip_prefix(key)
        .is_some_and(|rest| rest.starts_with(':'))
        || [format!("\"{key}\":"), format!("'{key}':")]
            .iter()
            .any(|q| t.starts_with(q.as_str()))
}

/// The section is an inline (flow-style) mapping, which [`set_section_keys`] leaves alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowStyle;

/// `text` with `section.key` set to each `Some` value and removed for each `None`.
pub fn set_section_keys(
    text: &str,
    section: &str,
    updates: &[(&str, Option<&str>)],
) -> Result<String, FlowStyle> {
    let entries: Vec<(&str, Option<Entry<'_>>)> = updates
        .iter()
        .map(|(k, v)| (*k, v.map(Entry::Text)))
        .collect();
    set_section_entries(text, section, &entries)
}

/// A value written under a section key: a scalar, or a tree (mappings and
/// lists become indented block YAML).
#[derive(Debug, Clone, Copy)]
pub enum Entry<'a> {
    /// A string scalar (quoted when YAML would read it as something else).
    Text(&'a str),
    /// Any JSON value, written as block YAML.
    Tree(&'a serde_json::Value),
}

fn render_entry(key: &str, entry: Entry<'_>, indent: usize) -> String {
    let pad = " ".repeat(indent);
    match entry {
        Entry::Text(v) => format!("{pad}{key}: {}", yaml_scalar(v)),
        Entry::Tree(serde_json::Value::Object(map)) if !map.is_empty() => {
            let mut out = format!("{pad}{key}:");
            for (k, v) in map {
                out.push('\n');
                out.push_str(&render_entry(&yaml_key(k), Entry::Tree(v), indent + 2));
            }
            out
        }
        Entry::Tree(serde_json::Value::Array(items)) if !items.is_empty() => {
            let mut out = format!("{pad}{key}:");
            for item in items {
                out.push_str(&format!("\n{pad}  - {}", inline_value(item)));
            }
            out
        }
        Entry::Tree(value) => format!("{pad}{key}: {}", inline_value(value)),
    }
}

fn yaml_key(key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
    if plain {
        key.to_owned()
    } else {
        serde_json::Value::String(key.to_owned()).to_string()
    }
}

fn inline_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => yaml_scalar(s),
        // JSON is valid flow-style YAML.
        other => other.to_string(),
    }
}

/// [`set_section_keys`] for any [`Entry`] (a whole server entry under
/// `mcp_servers:`, for example); `None` removes the key.
pub fn set_section_entries(
    text: &str,
    section: &str,
    updates: &[(&str, Option<Entry<'_>>)],
) -> Result<String, FlowStyle> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let header = lines
        .iter()
        .position(|l| indent_of(l) == 0 && sets_key(l, section));
    let header = match header {
        Some(i) => i,
        None => {
            if updates.iter().all(|(_, v)| v.is_none()) {
                return Ok(text.to_owned());
            }
            lines.push(format!("{section}:"));
            lines.len() - 1
        }
    };
    // What follows `section:` on its own line: nothing (a block), a scalar (the
    // reference's `model: name` shorthand, which means `default`), or flow style.
    let after = lines[header]
        .split_once(':')
        .map_or("", |(_, rest)| rest)
        .trim()
        .to_owned();
    let after_value = after.split(" #").next().unwrap_or("").trim();
    let after_value = if after_value.starts_with('#') {
        ""
    } else {
        after_value
    };
    let mut shorthand = None;
    if after_value.starts_with('{') || after_value.starts_with('[') {
        return Err(FlowStyle);
    }
    if !after_value.is_empty() {
        shorthand = Some(after_value.to_owned());
        lines[header] = format!("{section}:");
    }
    // The block: following lines indented deeper than the header (blank and comment
    // lines inside it included).
    let mut end = header + 1;
    let mut child_indent = None;
    while end < lines.len() {
        let l = &lines[end];
        if !is_blank_or_comment(l) {
            if indent_of(l) == 0 {
                break;
            }
            child_indent.get_or_insert(indent_of(l));
        }
        end += 1;
    }
    // Trailing blank/comment lines belong to whatever comes next.
    while end > header + 1 && is_blank_or_comment(&lines[end - 1]) {
        end -= 1;
    }
    let indent = " ".repeat(child_indent.unwrap_or(2));
    let mut block: Vec<String> = lines[header + 1..end].to_vec();
    if let Some(value) = shorthand {
        block.insert(0, format!("{indent}default: {value}"));
    }
    for (key, value) in updates {
        let at = block
            .iter()
            .position(|l| indent_of(l) == indent.len() && sets_key(l, key));
        if let Some(i) = at {
            // The key's own continuation lines (a nested or multi-line value) go with it;
            // blank and comment lines after them stay.
            let next = block[i + 1..]
                .iter()
                .position(|l| !is_blank_or_comment(l) && indent_of(l) <= indent.len())
                .map_or(block.len(), |k| i + 1 + k);
            let mut j = next;
            while j > i + 1 && is_blank_or_comment(&block[j - 1]) {
                j -= 1;
            }
            block.drain(i + 1..j);
            match value {
                Some(v) => block[i] = render_entry(key, *v, indent.len()),
                None => {
                    block.remove(i);
                }
            }
        } else if let Some(v) = value {
            block.push(render_entry(key, *v, indent.len()));
        }
    }
    let mut out: Vec<String> = lines[..=header].to_vec();
    out.extend(block);
    out.extend(lines[end..].iter().cloned());
    let mut joined = out.join("\n");
    joined.push('\n');
    Ok(joined)
}

/// config.yaml text parsed as its owner wrote it (no defaults, no environment).
pub fn parse_user_yaml(text: &str, path: &Path) -> Result<serde_json::Value, ConfigEditError> {
    let display = path.display().to_string();
    crate::config::parse_yaml(text, &display).map_err(|e| ConfigEditError::Invalid {
        path: display,
        message: e.to_string(),
    })
}

/// A value as block YAML (mappings and lists indented, scalars inline).
pub fn render_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(map) if !map.is_empty() => map
            .iter()
            .map(|(k, v)| render_entry(&yaml_key(k), Entry::Tree(v), 0))
            .collect::<Vec<_>>()
            .join("\n"),
        serde_json::Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|item| format!("- {}", inline_value(item)))
            .collect::<Vec<_>>()
            .join("\n"),
        other => inline_value(other),
    }
}

/// Sets (or with `None` removes) a whole top-level key, its block included;
/// every other line stays as it is. A new key is appended.
pub fn set_top_level(text: &str, key: &str, entry: Option<Entry<'_>>) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let header = lines
        .iter()
        .position(|l| indent_of(l) == 0 && sets_key(l, key));
    let rendered = entry.map(|e| render_entry(&yaml_key(key), e, 0));
    match header {
        Some(i) => {
            let mut end = i + 1;
            while end < lines.len()
                && (is_blank_or_comment(&lines[end]) || indent_of(&lines[end]) > 0)
            {
                end += 1;
            }
            while end > i + 1 && is_blank_or_comment(&lines[end - 1]) {
                end -= 1;
            }
            let replacement: Vec<String> = rendered
                .map(|r| r.lines().map(str::to_owned).collect())
                .unwrap_or_default();
            lines.splice(i..end, replacement);
        }
        None => match rendered {
            Some(r) => lines.extend(r.lines().map(str::to_owned)),
            None => return text.to_owned(),
        },
    }
    let mut joined = lines.join("\n");
    joined.push('\n');
    joined
}

/// [`set_top_level`] on the file at `path` (created when missing), checked to
/// parse and replaced atomically.
pub fn update_top_level(
    path: &Path,
    key: &str,
    entry: Option<Entry<'_>>,
) -> Result<(), ConfigEditError> {
    let display = path.display().to_string();
    let io = |source| ConfigEditError::Io {
        path: display.clone(),
        source,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io(e)),
    };
    let edited = set_top_level(&text, key, entry);
    crate::config::parse_yaml(&edited, &display).map_err(|e| ConfigEditError::Invalid {
        path: display.clone(),
        message: e.to_string(),
    })?;
    hermes_fs::write_atomic(path, edited.as_bytes(), hermes_fs::Access::Keep).map_err(io)
}

/// Applies [`set_section_keys`] to the file at `path` (created when missing), checking
/// that the result parses, and replaces the file atomically.
pub fn update_config_file(
    path: &Path,
    section: &str,
    updates: &[(&str, Option<&str>)],
) -> Result<(), ConfigEditError> {
    let entries: Vec<(&str, Option<Entry<'_>>)> = updates
        .iter()
        .map(|(k, v)| (*k, v.map(Entry::Text)))
        .collect();
    update_config_entries(path, section, &entries)
}

/// [`update_config_file`] for any [`Entry`].
pub fn update_config_entries(
    path: &Path,
    section: &str,
    updates: &[(&str, Option<Entry<'_>>)],
) -> Result<(), ConfigEditError> {
    let display = path.display().to_string();
    let io = |source| ConfigEditError::Io {
        path: display.clone(),
        source,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io(e)),
    };
    let edited = set_section_entries(&text, section, updates).map_err(|FlowStyle| {
        ConfigEditError::Unsupported {
            path: display.clone(),
            section: section.to_owned(),
        }
    })?;
    crate::config::parse_yaml(&edited, &display).map_err(|e| ConfigEditError::Invalid {
        path: display.clone(),
        message: e.to_string(),
    })?;
    hermes_fs::write_atomic(path, edited.as_bytes(), hermes_fs::Access::Keep).map_err(io)
}

#[cfg(test)]
#[path = "config_edit_tests.rs"]
mod tests;
