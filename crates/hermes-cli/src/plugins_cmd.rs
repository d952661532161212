//! `hermes plugins`: the plugins installed in $HERMES_HOME/plugins, and
//! turning them on and off (`plugins.enabled` / `plugins.disabled` in config.yaml).

use std::io::Write;

use anyhow::Result;
use clap::{Args, Subcommand};
use hermes_session::Setup;
use hermes_session::plugins::{
    PluginInfo, PluginRuntime, PluginStatus, discover, plugins_dir, set_enabled,
};
use serde_json::json;

/// `hermes plugins` arguments.
#[derive(Debug, Args)]
pub struct PluginsArgs {
    #[command(subcommand)]
    action: Option<PluginsAction>,
}

#[derive(Debug, Subcommand)]
enum PluginsAction {
    /// List installed plugins and whether each loads.
    #[command(visible_alias = "ls")]
    List {
        /// Only enabled plugins.
        #[arg(long)]
        enabled: bool,
        /// One line per plugin: status, runtime, version, name.
        #[arg(long)]
        plain: bool,
        /// JSON.
        #[arg(long)]
        json: bool,
    },
    /// Enable a plugin (it loads in new sessions).
    Enable {
        /// The plugin's name.
        name: String,
    },
    /// Disable a plugin.
    Disable {
        /// The plugin's name.
        name: String,
    },
}

fn runtime_label(runtime: &PluginRuntime) -> &'static str {
    match runtime {
        PluginRuntime::Executable(_) => "exec",
        PluginRuntime::Python => "python",
        PluginRuntime::Missing => "none",
    }
}

/// Runs `hermes plugins`.
pub(crate) fn run(args: PluginsArgs, setup: &Setup) -> Result<std::process::ExitCode> {
    inner(args, setup).map(|()| std::process::ExitCode::SUCCESS)
}

/// `plugins list --json`.
fn list_json(plugins: &[PluginInfo], out: &mut impl Write) -> Result<()> {
    let list: Vec<_> = plugins
        .iter()
        .map(|p| {
            json!({
                "name": p.key,
                "status": p.status.label(),
                "version": p.version,
                "description": p.description,
                "source": "user",
                "runtime": runtime_label(&p.runtime),
                "hooks": p.hooks.iter().map(|h| h.as_str()).collect::<Vec<_>>(),
                "tools": p.tools,
                "platforms": p.platforms,
                "error": p.error,
            })
        })
        .collect();
    writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
    Ok(())
}

/// `plugins list --plain`: one line each.
fn list_plain(plugins: &[PluginInfo], out: &mut impl Write) -> Result<()> {
    for p in plugins {
        writeln!(
            out,
            "{:12} {:8} {:8} {}",
            p.status.label(),
            runtime_label(&p.runtime),
            p.version,
            p.key
        )?;
    }
    Ok(())
}

/// `plugins list`: each plugin with what it provides and its problems.
fn list_table(plugins: &[PluginInfo], out: &mut impl Write) -> Result<()> {
    writeln!(out, "Plugins ({}):", plugins.len())?;
    for p in plugins {
        let glyph = match p.status {
            PluginStatus::Enabled => "✓",
            PluginStatus::Disabled => "✗",
            PluginStatus::NotEnabled => "○",
        };
        let version = if p.version.is_empty() {
            String::new()
        } else {
            format!(" v{}", p.version)
        };
        let description = if p.description.is_empty() {
            "(no description)"
        } else {
            &p.description
        };
        writeln!(
            out,
            "  {glyph} {}{version} — {description} [{}, {}]",
            p.key,
            p.status.label(),
            runtime_label(&p.runtime)
        )?;
        if !p.hooks.is_empty() {
            let hooks: Vec<&str> = p.hooks.iter().map(|h| h.as_str()).collect();
            writeln!(out, "      hooks: {}", hooks.join(", "))?;
        }
        if !p.platforms.is_empty() {
            writeln!(out, "      platforms: {}", p.platforms.join(", "))?;
        }
        if !p.tools.is_empty() {
            writeln!(out, "      tools: {}", p.tools.join(", "))?;
        }
        if p.runtime == PluginRuntime::Python {
            writeln!(
                out,
                "      ⚠ Python plugin: hermes-rs cannot load it (give it an `executable`)"
            )?;
        }
        if let Some(e) = &p.error {
            writeln!(out, "      ⚠ {e}")?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "Plugins are opt-in by default — only 'enabled' plugins load."
    )?;
    Ok(())
}

fn inner(args: PluginsArgs, setup: &Setup) -> Result<()> {
    let mut out = std::io::stdout();
    let action = args.action.unwrap_or(PluginsAction::List {
        enabled: false,
        plain: false,
        json: false,
    });
    match action {
        PluginsAction::List {
            enabled,
            plain,
            json,
        } => {
            let plugins: Vec<_> = discover(setup)
                .into_iter()
                .filter(|p| !enabled || p.status == PluginStatus::Enabled)
                .collect();
            if json {
                list_json(&plugins, &mut out)?;
            } else if plugins.is_empty() {
                writeln!(out, "No plugins installed.")?;
                writeln!(
                    out,
                    "Put a plugin in {}/<name>/ with a plugin.yaml naming its `executable`.",
                    plugins_dir(setup).display()
                )?;
            } else if plain {
                list_plain(&plugins, &mut out)?;
            } else {
                list_table(&plugins, &mut out)?;
            }
        }
        PluginsAction::Enable { name } => match set_enabled(setup, &name, true)? {
            (key, true) => writeln!(out, "✓ Plugin {key} enabled. Takes effect on next session.")?,
            (key, false) => writeln!(out, "Plugin '{key}' is already enabled.")?,
        },
        PluginsAction::Disable { name } => match set_enabled(setup, &name, false)? {
            (key, true) => writeln!(
                out,
                "⊘ Plugin {key} disabled. Takes effect on next session."
            )?,
            (key, false) => writeln!(out, "Plugin '{key}' is already disabled.")?,
        },
    }
    Ok(())
}
