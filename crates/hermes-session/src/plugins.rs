//! Plugins in `$HERMES_HOME/plugins/<name>/plugin.yaml`. Hermes-rs runs a
//! plugin as an external executable (the manifest's `executable`) speaking
//! JSON-RPC on stdio; the reference's Python plugins (`__init__.py` with
//! `register(ctx)`) cannot load into a Rust binary, so they are listed but
//! never run. Plugins are opt-in: only those in `plugins.enabled` load, and
//! `plugins.disabled` always wins.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hermes_state::config_edit::{Entry, parse_user_yaml, update_config_entries};
use hermes_tools::hooks::{HookEvent, PluginCommand, PluginHook};
use serde_json::{Value, json};

use crate::setup::Setup;

/// Seconds a plugin may take to answer one hook when its manifest names none.
const DEFAULT_PLUGIN_TIMEOUT_SECS: u64 = 30;

/// How a plugin runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginRuntime {
    /// An executable speaking JSON-RPC on stdio (the argv).
    Executable(Vec<String>),
    /// A Python plugin of the reference: listed, never loaded.
    Python,
    /// Neither: the manifest names no executable and there is no `__init__.py`.
    Missing,
}

/// Whether a plugin loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginStatus {
    /// In `plugins.enabled` (and not disabled).
    Enabled,
    /// In `plugins.disabled`.
    Disabled,
    /// Installed but not enabled.
    NotEnabled,
}

impl PluginStatus {
    /// The word `hermes plugins list` shows.
    pub fn label(self) -> &'static str {
        match self {
            PluginStatus::Enabled => "enabled",
            PluginStatus::Disabled => "disabled",
            PluginStatus::NotEnabled => "not enabled",
        }
    }
}

/// One installed plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginInfo {
    /// The name people enable it by (the manifest's `name`, else its directory).
    pub key: String,
    /// Its version.
    pub version: String,
    /// What it does.
    pub description: String,
    /// Its directory.
    pub dir: PathBuf,
    /// How it runs.
    pub runtime: PluginRuntime,
    /// The events it declared (`provides_hooks`), unknown names dropped.
    pub hooks: Vec<HookEvent>,
    /// The tools it declared (`provides_tools`).
    pub tools: Vec<String>,
    /// The messaging platforms it adds to the gateway (`provides_platforms`).
    pub platforms: Vec<String>,
    /// The context engine it provides (`provides_context_engine`).
    pub context_engine: Option<String>,
    /// The memory provider it provides (`provides_memory_provider`).
    pub memory_provider: Option<String>,
    /// Seconds one hook call may take.
    pub timeout_secs: u64,
    /// Whether it loads.
    pub status: PluginStatus,
    /// A problem with its manifest.
    pub error: Option<String>,
}

/// The directory plugins are installed in.
pub fn plugins_dir(setup: &Setup) -> PathBuf {
    setup.home.root().join("plugins")
}

fn config_list(setup: &Setup, key: &str) -> Vec<String> {
    match setup.config.get(&format!("plugins.{key}")) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Every installed plugin, sorted by key.
pub fn discover(setup: &Setup) -> Vec<PluginInfo> {
    let enabled = config_list(setup, "enabled");
    let disabled = config_list(setup, "disabled");
    let Ok(entries) = std::fs::read_dir(plugins_dir(setup)) else {
        return Vec::new();
    };
    let mut found: Vec<PluginInfo> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter_map(|dir| read_plugin(&dir))
        .map(|mut p| {
            let dir_name = p.dir.file_name().map(|n| n.to_string_lossy().into_owned());
            let named = |list: &[String]| {
                list.iter()
                    .any(|n| *n == p.key || Some(n) == dir_name.as_ref())
            };
            p.status = if named(&disabled) {
                PluginStatus::Disabled
            } else if named(&enabled) {
                PluginStatus::Enabled
            } else {
                PluginStatus::NotEnabled
            };
            p
        })
        .collect();
    found.sort_by(|a, b| a.key.cmp(&b.key));
    found
}

fn read_plugin(dir: &Path) -> Option<PluginInfo> {
    let manifest = ["plugin.yaml", "plugin.yml"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())?;
    let dir_name = dir.file_name()?.to_string_lossy().into_owned();
    let mut info = PluginInfo {
        key: dir_name,
        version: String::new(),
        description: String::new(),
        dir: dir.to_path_buf(),
        runtime: PluginRuntime::Missing,
        hooks: Vec::new(),
        tools: Vec::new(),
        platforms: Vec::new(),
        context_engine: None,
        memory_provider: None,
        timeout_secs: DEFAULT_PLUGIN_TIMEOUT_SECS,
        status: PluginStatus::NotEnabled,
        error: None,
    };
    let text = match std::fs::read_to_string(&manifest) {
        Ok(t) => t,
        Err(e) => {
            info.error = Some(format!("cannot read {}: {e}", manifest.display()));
            return Some(info);
        }
    };
    let value = match parse_user_yaml(&text, &manifest) {
        Ok(v) => v,
        Err(e) => {
            info.error = Some(e.to_string());
            return Some(info);
        }
    };
    let text_of = |key: &str| match value.get(key) {
        Some(Value::String(s)) => Some(s.trim().to_owned()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    if let Some(name) = text_of("name").filter(|n| !n.is_empty()) {
        info.key = name;
    }
    info.version = text_of("version").unwrap_or_default();
    info.description = text_of("description").unwrap_or_default();
    if let Some(Value::Array(hooks)) = value.get("provides_hooks") {
        info.hooks = hooks
            .iter()
            .filter_map(Value::as_str)
            .filter_map(HookEvent::parse)
            .collect();
    }
    if let Some(Value::Array(tools)) = value.get("provides_tools") {
        info.tools = tools
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
    }
    if let Some(Value::Array(platforms)) = value.get("provides_platforms") {
        info.platforms = platforms
            .iter()
            .filter_map(Value::as_str)
            .map(|p| p.trim().to_ascii_lowercase())
            .filter(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .collect();
    }
    info.context_engine = text_of("provides_context_engine").filter(|n| !n.is_empty());
    info.memory_provider = text_of("provides_memory_provider").filter(|n| !n.is_empty());
    if let Some(t) = value.get("timeout").and_then(Value::as_u64) {
        info.timeout_secs = t.clamp(1, 300);
    }
    info.runtime = match value.get("executable") {
        Some(Value::String(cmd)) => match shlex::split(cmd) {
            Some(argv) if !argv.is_empty() => PluginRuntime::Executable(argv),
            _ => {
                info.error = Some(format!("executable {cmd:?} cannot be parsed"));
                PluginRuntime::Missing
            }
        },
        Some(Value::Array(argv)) if !argv.is_empty() => PluginRuntime::Executable(
            argv.iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect(),
        ),
        _ if dir.join("__init__.py").is_file() => PluginRuntime::Python,
        _ => PluginRuntime::Missing,
    };
    Some(info)
}

/// The enabled executable plugins, and a warning for each enabled plugin
/// that cannot run.
pub fn enabled_plugins(setup: &Setup) -> (Vec<Arc<PluginHook>>, Vec<String>) {
    let mut handlers: Vec<Arc<PluginHook>> = Vec::new();
    let mut warnings = Vec::new();
    for plugin in discover(setup) {
        if plugin.status != PluginStatus::Enabled {
            continue;
        }
        if let Some(e) = &plugin.error {
            warnings.push(format!("plugin {}: {e}", plugin.key));
            continue;
        }
        match plugin.runtime {
            PluginRuntime::Executable(argv) => {
                handlers.push(Arc::new(PluginHook::new(PluginCommand {
                    name: plugin.key,
                    argv,
                    dir: plugin.dir,
                    events: plugin.hooks,
                    tools: plugin.tools,
                    timeout_secs: plugin.timeout_secs,
                })));
            }
            PluginRuntime::Python => warnings.push(format!(
                "plugin {} is a Python plugin; hermes-rs cannot load Python code. \
                 Give its plugin.yaml an `executable` that speaks the JSON-RPC plugin protocol \
                 (see the README's Plugins section).",
                plugin.key
            )),
            PluginRuntime::Missing => warnings.push(format!(
                "plugin {} has no `executable` in its plugin.yaml; skipped",
                plugin.key
            )),
        }
    }
    (handlers, warnings)
}

/// The enabled executable plugin providing context engine `name`, ready to start.
pub fn context_engine_plugin(setup: &Setup, name: &str) -> Option<Arc<PluginHook>> {
    provider_plugin(setup, |p| p.context_engine.as_deref() == Some(name))
}

/// The enabled executable plugin providing memory provider `name`, ready to start.
pub fn memory_provider_plugin(setup: &Setup, name: &str) -> Option<Arc<PluginHook>> {
    provider_plugin(setup, |p| p.memory_provider.as_deref() == Some(name))
}

/// The first enabled executable plugin `wanted` picks, as a process of its own.
fn provider_plugin(setup: &Setup, wanted: impl Fn(&PluginInfo) -> bool) -> Option<Arc<PluginHook>> {
    discover(setup)
        .into_iter()
        .filter(|p| p.status == PluginStatus::Enabled && p.error.is_none())
        .find(|p| wanted(p))
        .and_then(|p| match p.runtime {
            PluginRuntime::Executable(argv) => Some(Arc::new(PluginHook::new(PluginCommand {
                name: p.key,
                argv,
                dir: p.dir,
                events: Vec::new(),
                tools: Vec::new(),
                timeout_secs: p.timeout_secs,
            }))),
            _ => None,
        })
}

/// A messaging platform an enabled plugin adds to the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformPlugin {
    /// The platform's name (the sessions' `source`).
    pub platform: String,
    /// The plugin's key.
    pub plugin: String,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Its directory (where it runs).
    pub dir: PathBuf,
}

/// The platforms of the enabled executable plugins.
pub fn enabled_platforms(setup: &Setup) -> Vec<PlatformPlugin> {
    discover(setup)
        .into_iter()
        .filter(|p| p.status == PluginStatus::Enabled && p.error.is_none())
        .filter_map(|p| match p.runtime {
            PluginRuntime::Executable(argv) => Some(
                p.platforms
                    .iter()
                    .map(|platform| PlatformPlugin {
                        platform: platform.clone(),
                        plugin: p.key.clone(),
                        argv: argv.clone(),
                        dir: p.dir.clone(),
                    })
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Why a plugin could not be enabled or disabled.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// No installed plugin has that name.
    #[error("Plugin '{0}' is not installed or bundled (plugins live in {1}).")]
    NotInstalled(String, String),
    /// config.yaml could not be changed.
    #[error(transparent)]
    Config(#[from] hermes_state::config_edit::ConfigEditError),
}

/// Enables (or disables) the plugin `name`; `Ok(false)` when it already was.
pub fn set_enabled(setup: &Setup, name: &str, enable: bool) -> Result<(String, bool), PluginError> {
    let plugins = discover(setup);
    let plugin = plugins
        .iter()
        .find(|p| p.key == name || p.dir.file_name().is_some_and(|d| d == name))
        .ok_or_else(|| {
            PluginError::NotInstalled(name.to_owned(), plugins_dir(setup).display().to_string())
        })?;
    let key = plugin.key.clone();
    let wanted = if enable {
        PluginStatus::Enabled
    } else {
        PluginStatus::Disabled
    };
    if plugin.status == wanted {
        return Ok((key, false));
    }
    let mut enabled = config_list(setup, "enabled");
    let mut disabled = config_list(setup, "disabled");
    enabled.retain(|n| *n != key && n != name);
    disabled.retain(|n| *n != key && n != name);
    if enable {
        enabled.push(key.clone());
    } else {
        disabled.push(key.clone());
    }
    let (enabled, disabled) = (json!(enabled), json!(disabled));
    update_config_entries(
        &setup.home.config_file(),
        "plugins",
        &[
            ("enabled", Some(Entry::Tree(&enabled))),
            ("disabled", Some(Entry::Tree(&disabled))),
        ],
    )?;
    Ok((key, true))
}
