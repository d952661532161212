//! The process's lifecycle hooks: shell hooks from `hooks:` in config.yaml
//! that a person approved (or `--accept-hooks` / `HERMES_ACCEPT_HOOKS=1` /
//! `hooks_auto_accept: true` approves), after the enabled plugins.

use std::sync::Arc;

use hermes_tools::hooks::{
    Allowlist, HookHandler, HookSpec, Hooks, PluginHook, ShellHook, Standing, parse_hook_specs,
};

use crate::plugins;
use crate::setup::Setup;

/// The hooks of a process and what is worth telling the person about them.
#[derive(Debug, Default)]
pub struct LoadedHooks {
    /// The hooks that will run.
    pub hooks: Hooks,
    /// Entries skipped or fixed, hooks not approved, plugins that failed to start.
    pub warnings: Vec<String>,
    /// The enabled plugins (whose tools sessions offer).
    pub plugins: Vec<Arc<PluginHook>>,
}

/// The configured shell hooks, without their consent state.
pub fn configured_hooks(setup: &Setup) -> (Vec<HookSpec>, Vec<String>) {
    parse_hook_specs(setup.config.get("hooks"))
}

/// Whether hooks are approved without asking: `accept` (the `--accept-hooks`
/// flag), `HERMES_ACCEPT_HOOKS`, or `hooks_auto_accept` in config.yaml.
pub fn auto_accept(setup: &Setup, accept: bool) -> bool {
    let configured = setup
        .config
        .get("hooks_auto_accept")
        .and_then(hermes_state::settings::lenient::flag_of)
        == Some(true);
    accept || setup.env_flag("HERMES_ACCEPT_HOOKS") || configured
}

/// Loads the hooks: plugins first, then each shell hook that is allowlisted,
/// auto-accepted, or approved by `ask` (a prompt at a terminal; `None` where
/// nobody can answer). New approvals are recorded in the allowlist.
pub fn load_hooks(
    setup: &Setup,
    accept: bool,
    ask: Option<&mut dyn FnMut(&HookSpec) -> bool>,
) -> LoadedHooks {
    let mut loaded = LoadedHooks::default();
    if setup.env_flag("HERMES_SAFE_MODE") {
        return loaded;
    }
    let mut handlers: Vec<Arc<dyn HookHandler>> = Vec::new();
    let (enabled, plugin_warnings) = plugins::enabled_plugins(setup);
    handlers.extend(enabled.iter().map(|p| p.clone() as Arc<dyn HookHandler>));
    loaded.plugins = enabled;
    loaded.warnings.extend(plugin_warnings);
    let (specs, warnings) = configured_hooks(setup);
    loaded.warnings.extend(warnings);
    let root = setup.home.root();
    let home = setup.env.get("HOME").map(std::path::PathBuf::from);
    let accept = auto_accept(setup, accept);
    let mut allowlist = Allowlist::load(root);
    let mut changed = false;
    let mut ask = ask;
    for spec in specs {
        let event = spec.event.as_str();
        let standing = allowlist.standing(event, &spec.command, home.as_deref());
        let allowed = if standing == Standing::Approved {
            true
        } else if accept || ask.as_mut().is_some_and(|ask| ask(&spec)) {
            allowlist.approve(event, &spec.command, home.as_deref());
            changed = true;
            true
        } else if standing == Standing::Changed {
            loaded.warnings.push(format!(
                "shell hook for {event} ({}) changed since it was approved — skipped. Check the \
                 script, then approve it again at the TTY prompt or with --accept-hooks.",
                spec.command
            ));
            false
        } else {
            loaded.warnings.push(format!(
                "shell hook for {event} ({}) not allowlisted — skipped. Use --accept-hooks / \
                 HERMES_ACCEPT_HOOKS=1 / hooks_auto_accept: true, or approve at the TTY prompt next run.",
                spec.command
            ));
            false
        };
        if allowed {
            handlers.push(Arc::new(ShellHook::new(spec, home.clone())));
        }
    }
    if changed && let Err(e) = allowlist.save(root) {
        loaded.warnings.push(format!(
            "could not save {}: {e}",
            Allowlist::path(root).display()
        ));
    }
    loaded.hooks = Hooks::new(handlers);
    loaded
}
