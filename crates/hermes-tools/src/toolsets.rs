//! Named groups of tools, with the reference's names, and their resolution.

use std::collections::BTreeSet;

/// A toolset: its own tools plus other toolsets it includes.
#[derive(Debug, Clone, Copy)]
pub struct ToolsetDef {
    /// Name as users write it (`-t file,terminal`).
    pub name: &'static str,
    /// One-line description for `hermes tools`.
    pub description: &'static str,
    /// Tools it names directly.
    pub tools: &'static [&'static str],
    /// Toolsets whose tools it also gets.
    pub includes: &'static [&'static str],
}

/// The core tool list the reference's `hermes-cli` toolset offers. Names we do not
/// implement yet resolve to nothing (the registry only offers registered tools).
const CORE_TOOLS: &[&str] = &[
    "web_search",
    "web_extract",
    "terminal",
    "process",
    "read_file",
    "write_file",
    "patch",
    "search_files",
    "vision_analyze",
    "image_generate",
    "skills_list",
    "skill_view",
    "skill_manage",
    "browser_navigate",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_scroll",
    "browser_back",
    "browser_press",
    "browser_get_images",
    "browser_vision",
    "browser_console",
    "browser_cdp",
    "browser_dialog",
    "text_to_speech",
    "todo",
    "memory",
    "session_search",
    "clarify",
    "execute_code",
    "delegate_task",
    "cronjob",
];

/// Every toolset we know, with the reference's names.
pub const TOOLSETS: &[ToolsetDef] = &[
    ToolsetDef {
        name: "web",
        description: "Web search and page extraction",
        tools: &["web_search", "web_extract"],
        includes: &[],
    },
    ToolsetDef {
        name: "terminal",
        description: "Shell command execution and process management",
        tools: &["terminal", "process"],
        includes: &[],
    },
    ToolsetDef {
        name: "file",
        description: "Read, write, patch and search files",
        tools: &["read_file", "write_file", "patch", "search_files"],
        includes: &[],
    },
    ToolsetDef {
        name: "todo",
        description: "Task planning and tracking for multi-step work",
        tools: &["todo"],
        includes: &[],
    },
    ToolsetDef {
        name: "memory",
        description: "Persistent memory across sessions",
        tools: &["memory"],
        includes: &[],
    },
    ToolsetDef {
        name: "session_search",
        description: "Search past conversations",
        tools: &["session_search"],
        includes: &[],
    },
    ToolsetDef {
        name: "skills",
        description: "Read and manage skill documents",
        tools: &["skills_list", "skill_view", "skill_manage"],
        includes: &[],
    },
    ToolsetDef {
        name: "clarify",
        description: "Ask the user a clarifying question",
        tools: &["clarify"],
        includes: &[],
    },
    ToolsetDef {
        name: "code_execution",
        description: "Run a Python script that calls tools",
        tools: &["execute_code"],
        includes: &[],
    },
    ToolsetDef {
        name: "delegation",
        description: "Spawn subagents for isolated subtasks",
        tools: &["delegate_task"],
        includes: &[],
    },
    ToolsetDef {
        name: "hermes-cli",
        description: "Everything the interactive CLI offers",
        tools: CORE_TOOLS,
        includes: &[],
    },
    ToolsetDef {
        name: "hermes-cron",
        description: "What scheduled jobs get by default",
        tools: CORE_TOOLS,
        includes: &[],
    },
    ToolsetDef {
        name: "all",
        description: "Every registered tool",
        tools: &[],
        includes: &["hermes-cli"],
    },
];

/// Looks a toolset up by name.
pub fn find(name: &str) -> Option<&'static ToolsetDef> {
    TOOLSETS.iter().find(|t| t.name == name)
}

/// Why a toolset list could not be resolved.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ToolsetError {
    /// A name that is neither a toolset nor a tool.
    #[error("unknown toolset '{name}'. Known toolsets: {known}")]
    Unknown {
        /// The name given.
        name: String,
        /// Comma-separated known names.
        known: String,
    },
}

/// Resolves toolset names (following `includes`, cycle-safe) to a set of tool names.
/// A bare tool name is accepted too, as the reference does for `-t read_file`.
/// `mcp-<server>` names are passed through as toolset filters for dynamically registered tools.
pub fn resolve(
    names: &[String],
    is_tool: impl Fn(&str) -> bool,
) -> Result<ResolvedToolsets, ToolsetError> {
    let mut out = ResolvedToolsets::default();
    let mut seen = BTreeSet::new();
    let mut stack: Vec<String> = names
        .iter()
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .collect();
    while let Some(name) = stack.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(def) = find(&name) {
            out.tools.extend(def.tools.iter().map(|t| (*t).to_owned()));
            stack.extend(def.includes.iter().map(|i| (*i).to_owned()));
            out.toolsets.insert(name);
        } else if is_tool(&name) {
            out.tools.insert(name);
        } else if name.starts_with("mcp-") {
            out.toolsets.insert(name);
        } else {
            let known = TOOLSETS
                .iter()
                .map(|t| t.name)
                .collect::<Vec<_>>()
                .join(", ");
            return Err(ToolsetError::Unknown { name, known });
        }
    }
    Ok(out)
}

/// The outcome of [`resolve`]: tool names, plus toolset names for registry-side filtering.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedToolsets {
    /// Tool names selected directly or through a toolset.
    pub tools: BTreeSet<String>,
    /// Toolset names selected (used to pick up dynamically registered tools by toolset).
    pub toolsets: BTreeSet<String>,
}

impl ResolvedToolsets {
    /// Whether a tool with this name and toolset is selected.
    pub fn selects(&self, tool: &str, toolset: &str) -> bool {
        self.tools.contains(tool) || self.toolsets.contains(toolset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn hermes_cli_contains_the_core_tools() {
        let r = resolve(&names(&["hermes-cli"]), |_| false).unwrap();
        for t in ["terminal", "read_file", "patch", "todo"] {
            assert!(r.tools.contains(t), "{t}");
        }
    }

    #[test]
    fn includes_are_followed_once() {
        let r = resolve(&names(&["all", "hermes-cli"]), |_| false).unwrap();
        assert!(r.tools.contains("search_files"));
        assert!(r.toolsets.contains("hermes-cli") && r.toolsets.contains("all"));
    }

    #[test]
    fn bare_tool_names_and_unknowns() {
        let r = resolve(&names(&["file", "todo"]), |_| false).unwrap();
        assert_eq!(r.tools.len(), 5);
        let r = resolve(&names(&["read_file"]), |n| n == "read_file").unwrap();
        assert!(r.tools.contains("read_file"));
        let err = resolve(&names(&["bogus"]), |_| false).unwrap_err();
        assert!(err.to_string().contains("unknown toolset 'bogus'"));
        assert!(err.to_string().contains("hermes-cli"));
    }
}
