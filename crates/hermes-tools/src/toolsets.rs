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
    "read_terminal",
    "close_terminal",
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
    "ha_list_entities",
    "ha_get_state",
    "ha_list_services",
    "ha_call_service",
    "kanban_show",
    "kanban_list",
    "kanban_complete",
    "kanban_block",
    "kanban_heartbeat",
    "kanban_comment",
    "kanban_create",
    "kanban_link",
    "kanban_unblock",
    "kanban_attach",
    "kanban_attach_url",
    "kanban_attachments",
    "computer_use",
];

const BROWSER_TOOLS: &[&str] = &[
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
    "web_search",
];

/// A toolset with its own tools and no includes.
const fn set(
    name: &'static str,
    description: &'static str,
    tools: &'static [&'static str],
) -> ToolsetDef {
    ToolsetDef {
        name,
        description,
        tools,
        includes: &[],
    }
}

/// A messaging platform's default toolset: the core tools plus the platform's own.
const fn platform(
    name: &'static str,
    description: &'static str,
    includes: &'static [&'static str],
) -> ToolsetDef {
    ToolsetDef {
        name,
        description,
        tools: CORE_TOOLS,
        includes,
    }
}

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
    // The reference's other toolsets. Tools we have not built resolve to
    // nothing, so a config naming these keeps working.
    set(
        "search",
        "Web search without page extraction",
        &["web_search"],
    ),
    set("x_search", "Search posts on X", &["x_search"]),
    set("vision", "Look at images", &["vision_analyze"]),
    set("video", "Understand videos", &["video_analyze"]),
    set("image_gen", "Generate images", &["image_generate"]),
    set(
        "video_gen",
        "Generate and edit videos",
        &["video_generate", "xai_video_edit", "xai_video_extend"],
    ),
    set("computer_use", "Control the desktop", &["computer_use"]),
    set("browser", "Drive a web browser", BROWSER_TOOLS),
    set("cronjob", "Manage scheduled jobs", &["cronjob"]),
    set("tts", "Turn text into speech", &["text_to_speech"]),
    set("context_engine", "Tools of the active context engine", &[]),
    set(
        "project",
        "Desktop projects (GUI sessions)",
        &["project_list", "project_create", "project_switch"],
    ),
    set(
        "homeassistant",
        "Home Assistant control",
        &[
            "ha_list_entities",
            "ha_get_state",
            "ha_list_services",
            "ha_call_service",
        ],
    ),
    set(
        "kanban",
        "Multi-agent kanban board",
        &[
            "kanban_show",
            "kanban_list",
            "kanban_complete",
            "kanban_block",
            "kanban_heartbeat",
            "kanban_comment",
            "kanban_create",
            "kanban_link",
            "kanban_unblock",
            "kanban_attach",
            "kanban_attach_url",
            "kanban_attachments",
        ],
    ),
    set("discord", "Read and take part in Discord", &["discord"]),
    set(
        "discord_admin",
        "Manage a Discord server",
        &["discord_admin"],
    ),
    set(
        "yuanbao",
        "Yuanbao platform tools",
        &[
            "yb_query_group_info",
            "yb_query_group_members",
            "yb_send_dm",
            "yb_search_sticker",
            "yb_send_sticker",
        ],
    ),
    set(
        "feishu_doc",
        "Read Feishu/Lark documents",
        &["feishu_doc_read"],
    ),
    set(
        "feishu_drive",
        "Feishu/Lark document comments",
        &[
            "feishu_drive_list_comments",
            "feishu_drive_list_comment_replies",
            "feishu_drive_reply_comment",
            "feishu_drive_add_comment",
        ],
    ),
    set(
        "spotify",
        "Spotify playback and library",
        &[
            "spotify_playback",
            "spotify_devices",
            "spotify_queue",
            "spotify_search",
            "spotify_playlists",
            "spotify_albums",
            "spotify_library",
        ],
    ),
    ToolsetDef {
        name: "debugging",
        description: "Troubleshooting: shell, files and the web",
        tools: &["terminal", "process"],
        includes: &["web", "file"],
    },
    ToolsetDef {
        name: "safe",
        description: "No shell: web, vision and image generation",
        tools: &[],
        includes: &["web", "vision", "image_gen"],
    },
    ToolsetDef {
        name: "coding",
        description: "Files, shell, search, web docs, skills and planning",
        tools: CORE_TOOLS,
        includes: &[],
    },
    set("hermes-acp", "What editor (ACP) sessions get", CORE_TOOLS),
    set(
        "hermes-api-server",
        "What API server sessions get",
        CORE_TOOLS,
    ),
    platform("hermes-telegram", "Telegram bot sessions", &[]),
    platform(
        "hermes-discord",
        "Discord bot sessions",
        &["discord", "discord_admin"],
    ),
    platform("hermes-whatsapp", "WhatsApp sessions", &[]),
    platform("hermes-slack", "Slack bot sessions", &[]),
    platform("hermes-signal", "Signal sessions", &[]),
    platform("hermes-bluebubbles", "iMessage (BlueBubbles) sessions", &[]),
    platform("hermes-homeassistant", "Home Assistant sessions", &[]),
    platform("hermes-email", "Email sessions", &[]),
    platform("hermes-mattermost", "Mattermost sessions", &[]),
    platform("hermes-matrix", "Matrix sessions", &[]),
    platform("hermes-dingtalk", "DingTalk sessions", &[]),
    platform(
        "hermes-feishu",
        "Feishu/Lark sessions",
        &["feishu_doc", "feishu_drive"],
    ),
    platform("hermes-weixin", "Weixin sessions", &[]),
    platform("hermes-qqbot", "QQ bot sessions", &[]),
    platform("hermes-wecom", "WeCom sessions", &[]),
    platform("hermes-wecom-callback", "WeCom callback app sessions", &[]),
    platform("hermes-yuanbao", "Yuanbao sessions", &["yuanbao"]),
    platform("hermes-sms", "SMS sessions", &[]),
    set(
        "hermes-webhook",
        "Webhook events",
        &["web_search", "web_extract", "vision_analyze", "clarify"],
    ),
    ToolsetDef {
        name: "hermes-gateway",
        description: "Every messaging platform's tools",
        tools: &[],
        includes: &[
            "hermes-telegram",
            "hermes-discord",
            "hermes-whatsapp",
            "hermes-slack",
            "hermes-signal",
            "hermes-bluebubbles",
            "hermes-homeassistant",
            "hermes-email",
            "hermes-sms",
            "hermes-mattermost",
            "hermes-matrix",
            "hermes-dingtalk",
            "hermes-feishu",
            "hermes-wecom",
            "hermes-wecom-callback",
            "hermes-weixin",
            "hermes-qqbot",
            "hermes-webhook",
            "hermes-yuanbao",
        ],
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

/// Resolves toolset names (following `includes`, cycle-safe) to a set of tool names.
/// A bare tool name is accepted too, as the reference does for `-t read_file`.
/// `mcp-<server>` names are passed through as toolset filters for dynamically
/// registered tools. A name that is none of these is noted in
/// [`ResolvedToolsets::unknown`] (the reference warns and goes on).
pub fn resolve(names: &[String], is_tool: impl Fn(&str) -> bool) -> ResolvedToolsets {
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
            out.unknown.insert(name);
        }
    }
    out
}

/// The outcome of [`resolve`]: tool names, plus toolset names for registry-side filtering.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedToolsets {
    /// Tool names selected directly or through a toolset.
    pub tools: BTreeSet<String>,
    /// Toolset names selected (used to pick up dynamically registered tools by toolset).
    pub toolsets: BTreeSet<String>,
    /// Names that are neither a toolset nor a tool.
    pub unknown: BTreeSet<String>,
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
        let r = resolve(&names(&["hermes-cli"]), |_| false);
        for t in ["terminal", "read_file", "patch", "todo"] {
            assert!(r.tools.contains(t), "{t}");
        }
    }

    #[test]
    fn includes_are_followed_once() {
        let r = resolve(&names(&["all", "hermes-cli"]), |_| false);
        assert!(r.tools.contains("search_files"));
        assert!(r.toolsets.contains("hermes-cli") && r.toolsets.contains("all"));
    }

    #[test]
    fn bare_tool_names_and_unknowns() {
        let r = resolve(&names(&["file", "todo"]), |_| false);
        assert_eq!(r.tools.len(), 5);
        assert!(r.unknown.is_empty());
        let r = resolve(&names(&["read_file"]), |n| n == "read_file");
        assert!(r.tools.contains("read_file"));
        let r = resolve(&names(&["file", "bogus", "mcp-github"]), |_| false);
        assert_eq!(r.unknown, BTreeSet::from(["bogus".to_owned()]));
        assert!(r.tools.contains("read_file") && r.toolsets.contains("mcp-github"));
    }

    #[test]
    fn every_reference_toolset_is_known() {
        // The reference 0.19.0's toolset names: a config naming any of them
        // must resolve without a warning, built or not.
        let reference = [
            "web",
            "search",
            "x_search",
            "vision",
            "video",
            "image_gen",
            "video_gen",
            "computer_use",
            "terminal",
            "skills",
            "browser",
            "cronjob",
            "file",
            "tts",
            "todo",
            "memory",
            "context_engine",
            "session_search",
            "project",
            "clarify",
            "code_execution",
            "delegation",
            "homeassistant",
            "kanban",
            "discord",
            "discord_admin",
            "yuanbao",
            "feishu_doc",
            "feishu_drive",
            "spotify",
            "debugging",
            "safe",
            "coding",
            "hermes-acp",
            "hermes-api-server",
            "hermes-cli",
            "hermes-cron",
            "hermes-telegram",
            "hermes-discord",
            "hermes-whatsapp",
            "hermes-slack",
            "hermes-signal",
            "hermes-bluebubbles",
            "hermes-homeassistant",
            "hermes-email",
            "hermes-mattermost",
            "hermes-matrix",
            "hermes-dingtalk",
            "hermes-feishu",
            "hermes-weixin",
            "hermes-qqbot",
            "hermes-wecom",
            "hermes-wecom-callback",
            "hermes-yuanbao",
            "hermes-sms",
            "hermes-webhook",
            "hermes-gateway",
        ];
        for name in reference {
            assert!(find(name).is_some(), "{name}");
        }
        let r = resolve(&names(&["hermes-gateway", "browser", "safe"]), |_| false);
        assert!(r.unknown.is_empty());
        assert!(r.tools.contains("discord") && r.tools.contains("browser_click"));
    }
}
