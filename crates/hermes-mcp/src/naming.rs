//! Wire names for MCP tools: `mcp__<server>__<tool>`, as the reference and
//! Claude Code/Codex name them, kept within the providers' 64-character limit.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

/// Every provider we speak to rejects longer function names.
pub const MAX_TOOL_NAME: usize = 64;

/// Replaces every character outside `[A-Za-z0-9_]` with `_` (`get-sum` → `get_sum`).
pub fn sanitize(component: &str) -> String {
    component
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `mcp__<server>__<tool>`, both parts sanitised (not yet length-limited).
pub fn prefixed(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", sanitize(server), sanitize(tool))
}

/// The toolset a server's tools belong to.
pub fn toolset(server: &str) -> String {
    format!("mcp-{server}")
}

/// Hands out wire names, cutting long ones to [`MAX_TOOL_NAME`] with a short
/// hash of the full name so two long names sharing a prefix stay distinct.
#[derive(Debug, Default)]
pub struct NameAllocator {
    taken: BTreeSet<String>,
}

impl NameAllocator {
    /// An allocator that avoids `reserved` (the built-in tools' names).
    pub fn new(reserved: impl IntoIterator<Item = String>) -> Self {
        Self {
            taken: reserved.into_iter().collect(),
        }
    }

    /// The wire name for `server`'s `tool`, or `None` when it would shadow a
    /// reserved name (a built-in tool keeps its name).
    pub fn allocate(&mut self, server: &str, tool: &str) -> Option<String> {
        let full = prefixed(server, tool);
        if full.len() <= MAX_TOOL_NAME {
            if self.taken.contains(&full) {
                return None;
            }
            self.taken.insert(full.clone());
            return Some(full);
        }
        let mut salt = 0u32;
        loop {
            let candidate = shorten(&full, salt);
            if self.taken.insert(candidate.clone()) {
                return Some(candidate);
            }
            salt += 1;
        }
    }
}

fn shorten(full: &str, salt: u32) -> String {
    let mut hasher = Sha256::new();
    hasher.update(full.as_bytes());
    if salt > 0 {
        hasher.update(salt.to_le_bytes());
    }
    let digest = hasher.finalize();
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    // All characters are ASCII after sanitising, so byte slicing is safe.
    let keep = MAX_TOOL_NAME - hash.len() - 1;
    format!("{}_{hash}", &full[..keep])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn sanitises_like_the_reference() {
        assert_eq!(
            prefixed("everything", "get-sum"),
            "mcp__everything__get_sum"
        );
        assert_eq!(prefixed("my.server", "a/b c"), "mcp__my_server__a_b_c");
        assert_eq!(sanitize("ünï"), "_n_");
        assert_eq!(toolset("fs"), "mcp-fs");
    }

    #[test]
    fn long_names_are_cut_without_collisions() {
        let mut names = NameAllocator::default();
        let long = "x".repeat(80);
        let a = names.allocate("server", &format!("{long}_one")).unwrap();
        let b = names.allocate("server", &format!("{long}_two")).unwrap();
        assert_eq!(a.len(), MAX_TOOL_NAME);
        assert_eq!(b.len(), MAX_TOOL_NAME);
        assert_ne!(a, b);
        assert!(a.starts_with("mcp__server__xxx"));
        // Stable: the same full name gets the same cut name.
        let mut again = NameAllocator::default();
        assert_eq!(again.allocate("server", &format!("{long}_one")).unwrap(), a);
    }

    #[test]
    fn built_in_names_are_never_shadowed() {
        let mut names = NameAllocator::new(["mcp__a__b".to_owned()]);
        assert_eq!(names.allocate("a", "b"), None);
        assert_eq!(names.allocate("a", "c").as_deref(), Some("mcp__a__c"));
        // Two tools that sanitise to the same name: the second is dropped.
        assert_eq!(names.allocate("a", "c"), None);
    }
}
