//! `hermes tools list|enable|disable [--platform P]`: which toolsets a
//! platform's sessions get, kept in `platform_toolsets.<platform>` as the
//! reference's command writes it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use hermes_session::offer::{NOT_HERE, ToolOffer, tools_here};
use hermes_session::{Services, Setup};
use hermes_tools::toolsets::{find, resolve};

/// `hermes tools` arguments.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    #[command(subcommand)]
    action: Option<ToolsAction>,
}

#[derive(Debug, Subcommand)]
enum ToolsAction {
    /// List the toolsets and whether each is enabled (the default).
    List {
        /// Which platform's selection (cli, api_server, cron, telegram, …).
        #[arg(long, default_value = "cli")]
        platform: String,
    },
    /// Enable toolsets for a platform.
    Enable {
        /// Which platform's selection.
        #[arg(long, default_value = "cli")]
        platform: String,
        /// Toolset names (see `hermes tools list`).
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Disable toolsets for a platform.
    Disable {
        /// Which platform's selection.
        #[arg(long, default_value = "cli")]
        platform: String,
        /// Toolset names (see `hermes tools list`).
        #[arg(required = true)]
        names: Vec<String>,
    },
}

/// The toolsets users switch on and off, in the reference's order.
const CONFIGURABLE: &[&str] = &[
    "web",
    "browser",
    "terminal",
    "file",
    "code_execution",
    "vision",
    "video",
    "image_gen",
    "video_gen",
    "x_search",
    "tts",
    "skills",
    "todo",
    "memory",
    "context_engine",
    "session_search",
    "clarify",
    "delegation",
    "cronjob",
    "homeassistant",
    "spotify",
    "discord",
    "discord_admin",
    "yuanbao",
    "computer_use",
];

/// Off unless asked for, even when a platform's default bundle has their tools.
const DEFAULT_OFF: &[&str] = &[
    "homeassistant",
    "spotify",
    "discord",
    "discord_admin",
    "video",
    "video_gen",
    "x_search",
];

/// Platforms with a toolset selection.
const PLATFORMS: &[&str] = &[
    "cli",
    "telegram",
    "discord",
    "slack",
    "whatsapp",
    "signal",
    "bluebubbles",
    "email",
    "homeassistant",
    "mattermost",
    "matrix",
    "dingtalk",
    "feishu",
    "wecom",
    "wecom_callback",
    "weixin",
    "qqbot",
    "yuanbao",
    "webhook",
    "api_server",
    "cron",
];

/// Whether `name` is a whole bundle (a platform's default, `coding` …): the
/// written list names the toolsets it stands for instead.
fn is_bundle(name: &str) -> bool {
    name.starts_with("hermes-") || matches!(name, "all" | "*" | "coding" | "debugging" | "safe")
}

/// Whether `key` can be offered on `platform` (Discord's tools only there).
fn offered_on(key: &str, platform: &str) -> bool {
    !matches!(key, "discord" | "discord_admin") || platform == "discord"
}

/// The configurable toolsets enabled on `platform` by the current config.
fn enabled(setup: &Setup, platform: &str) -> BTreeSet<&'static str> {
    let listed = setup.config.toolsets_for(platform);
    let explicit: BTreeSet<&str> = listed.iter().map(String::as_str).collect();
    // Bundles (hermes-cli, coding …) enable every configurable toolset whose
    // tools they hold, bar the default-off ones.
    let bundles: Vec<String> = listed
        .iter()
        .filter(|n| !CONFIGURABLE.contains(&n.as_str()))
        .cloned()
        .collect();
    let bundled = resolve(&bundles, |_| false).tools;
    let disabled = setup.config.disabled_toolsets();
    CONFIGURABLE
        .iter()
        .copied()
        .filter(|key| offered_on(key, platform))
        .filter(|key| {
            explicit.contains(key)
                || (!DEFAULT_OFF.contains(key)
                    && find(key).is_some_and(|def| {
                        !def.tools.is_empty() && def.tools.iter().all(|t| bundled.contains(*t))
                    }))
        })
        .filter(|key| !disabled.iter().any(|d| d == key))
        .collect()
}

/// Runs a `hermes tools` action.
pub fn run(args: ToolsArgs, setup: &Setup) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let action = args.action.unwrap_or(ToolsAction::List {
        platform: "cli".into(),
    });
    let platform = match &action {
        ToolsAction::List { platform }
        | ToolsAction::Enable { platform, .. }
        | ToolsAction::Disable { platform, .. } => platform.clone(),
    };
    if !PLATFORMS.contains(&platform.as_str()) {
        writeln!(
            out,
            "✗ Unknown platform '{platform}'. Valid: {}",
            PLATFORMS.join(", ")
        )?;
        return Ok(ExitCode::FAILURE);
    }
    let all_known = match action {
        ToolsAction::List { .. } => {
            list(&mut out, setup, &platform)?;
            true
        }
        ToolsAction::Enable { names, .. } => change(&mut out, setup, &platform, &names, true)?,
        ToolsAction::Disable { names, .. } => change(&mut out, setup, &platform, &names, false)?,
    };
    // A name that was refused fails the command, as a script must see.
    Ok(if all_known {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Whether toolset `key`'s own tools can be offered here: `Ok` with the
/// tools left out and why, or why none can be.
fn availability(
    key: &str,
    here: &BTreeMap<String, ToolOffer>,
) -> Result<Vec<(String, String)>, String> {
    let Some(def) = find(key) else {
        return Err(NOT_HERE.to_owned());
    };
    // A tool listed under several toolsets (web_search under browser) is
    // judged by its own.
    let own: Vec<&str> = def
        .tools
        .iter()
        .copied()
        .filter(|t| here.get(*t).is_none_or(|o| o.toolset == key))
        .collect();
    if own.is_empty() {
        return Err(if key == "context_engine" {
            "no context engine with tools is configured".to_owned()
        } else {
            NOT_HERE.to_owned()
        });
    }
    let mut left_out = Vec::new();
    let mut offered = 0;
    for tool in &own {
        match here.get(*tool).map(|o| &o.offer) {
            Some(Ok(())) => offered += 1,
            Some(Err(why)) => left_out.push(((*tool).to_owned(), why.clone())),
            None => left_out.push(((*tool).to_owned(), NOT_HERE.to_owned())),
        }
    }
    if offered == 0 {
        let first = left_out.first().map(|(_, why)| why.clone());
        return Err(first.unwrap_or_else(|| NOT_HERE.to_owned()));
    }
    Ok(left_out)
}

fn list(out: &mut impl Write, setup: &Setup, platform: &str) -> Result<()> {
    let on = enabled(setup, platform);
    let here = tools_here(&Services::without_store(setup.clone()));
    writeln!(out, "Built-in toolsets ({platform}):")?;
    for key in CONFIGURABLE.iter().filter(|k| offered_on(k, platform)) {
        let label = find(key).map_or("", |d| d.description);
        match (on.contains(key), availability(key, &here)) {
            (true, Ok(left_out)) if left_out.is_empty() => {
                writeln!(out, "  ✓ enabled  {key}  {label}")?;
            }
            (true, Ok(left_out)) => {
                let missing: Vec<String> = left_out
                    .iter()
                    .map(|(tool, why)| format!("{tool}: {why}"))
                    .collect();
                writeln!(
                    out,
                    "  ✓ enabled  {key}  {label}  (without {})",
                    missing.join("; ")
                )?;
            }
            (true, Err(why)) => {
                writeln!(out, "  ⚠ enabled, not offered  {key}  {label} — {why}")?;
            }
            (false, Ok(_)) => writeln!(out, "  ✗ disabled  {key}  {label}")?,
            (false, Err(why)) => writeln!(out, "  ✗ disabled  {key}  {label} ({why})")?,
        }
    }
    if let Some(servers) = setup
        .config
        .get("mcp_servers")
        .and_then(|v| v.as_object())
        .filter(|m| !m.is_empty())
    {
        writeln!(out, "MCP servers:")?;
        for name in servers.keys() {
            writeln!(out, "  {name}  all tools enabled")?;
        }
    }
    Ok(())
}

/// Enables or disables `names`; whether every one of them could be.
fn change(
    out: &mut impl Write,
    setup: &Setup,
    platform: &str,
    names: &[String],
    enable: bool,
) -> Result<bool> {
    let mut on: BTreeSet<String> = enabled(setup, platform)
        .into_iter()
        .map(str::to_owned)
        .collect();
    let here = enable.then(|| tools_here(&Services::without_store(setup.clone())));
    let mut done = Vec::new();
    let mut unavailable = Vec::new();
    for name in names {
        let availability = here.as_ref().map(|here| availability(name, here));
        if !CONFIGURABLE.contains(&name.as_str()) {
            writeln!(
                out,
                "✗ Unknown toolset '{name}'. Known: {}",
                CONFIGURABLE.join(", ")
            )?;
        } else if let Some(Err(why)) = availability.as_ref()
            && why == NOT_HERE
        {
            writeln!(
                out,
                "✗ Toolset '{name}' cannot be enabled: {why} (the model would never be offered it)"
            )?;
        } else if !offered_on(name, platform) {
            writeln!(
                out,
                "✗ Toolset '{name}' is not available on platform '{platform}' (only: discord)"
            )?;
        } else {
            if enable {
                on.insert(name.clone());
            } else {
                on.remove(name);
            }
            if let Some(Err(why)) = availability {
                unavailable.push(format!("{name}: {why}"));
            }
            done.push(name.clone());
        }
    }
    // Entries that are not configurable toolsets nor bundles (MCP servers,
    // custom toolsets) stay in the list as they were.
    let kept = setup
        .config
        .toolsets_for(platform)
        .into_iter()
        .filter(|n| !CONFIGURABLE.contains(&n.as_str()) && !is_bundle(n));
    let mut list: Vec<String> = on.into_iter().chain(kept).collect();
    list.sort();
    list.dedup();
    let value = serde_json::Value::from(list);
    crate::config_cmd::write_key(
        &setup.home,
        &format!("platform_toolsets.{platform}"),
        Some(value),
    )?;
    if enable {
        let disabled: Vec<String> = setup
            .config
            .disabled_toolsets()
            .into_iter()
            .filter(|d| !done.contains(d))
            .collect();
        if disabled.len() != setup.config.disabled_toolsets().len() {
            crate::config_cmd::write_key(
                &setup.home,
                "agent.disabled_toolsets",
                Some(serde_json::Value::from(disabled)),
            )?;
        }
    }
    if !done.is_empty() {
        let verb = if enable { "Enabled" } else { "Disabled" };
        writeln!(out, "✓ {verb}: {}", done.join(", "))?;
    }
    for line in unavailable {
        writeln!(out, "⚠ Enabled but not offered until fixed — {line}")?;
    }
    Ok(done.len() == names.len())
}
