//! `memory.provider`: which external memory provider a session gets (at
//! most one), opened from its settings. `holographic` is built in; another
//! name is an enabled plugin's (`provides_memory_provider`); a name nothing
//! provides is a warning and the session goes on with the built-in memory.

use std::sync::Arc;

use hermes_tools::builtin::holographic::{Holographic, HolographicSettings};
use hermes_tools::memory_provider::MemoryProvider;

use crate::setup::Setup;
use crate::spec::Notice;

/// The provider `memory.provider` names, opened for a session on
/// `platform`; `None` when none is set or it cannot open (said in `notices`).
pub(crate) async fn open(
    setup: &Setup,
    platform: &str,
    notices: &mut Vec<Notice>,
) -> Option<Arc<dyn MemoryProvider>> {
    let name = setup
        .config
        .raw
        .pointer("/memory/provider")
        .and_then(serde_json::Value::as_str)
        .map(str::trim)
        .filter(|n| !n.is_empty() && *n != "builtin")?;
    match name {
        "holographic" => {
            let section = setup
                .config
                .raw
                .pointer("/plugins/hermes-memory-store")
                .cloned()
                .unwrap_or_default();
            let user_home = setup.env.get("HOME").map(std::path::Path::new);
            let settings =
                HolographicSettings::from_section(&section, setup.home.root(), user_home);
            match Holographic::open(settings) {
                Ok(provider) => Some(Arc::new(provider)),
                Err(e) => {
                    notices.push(Notice::Warning(format!(
                        "memory provider 'holographic' is off for this session: {e}"
                    )));
                    None
                }
            }
        }
        other => {
            let Some(plugin) = crate::plugins::memory_provider_plugin(setup, other) else {
                notices.push(Notice::Warning(format!(
                    "memory provider '{other}' is not available: not built in (holographic is) \
                     and no enabled plugin provides it; the session uses the built-in memory only"
                )));
                return None;
            };
            match crate::memory_plugin::PluginMemory::start(other, plugin, platform).await {
                Ok(provider) => Some(Arc::new(provider)),
                Err(e) => {
                    notices.push(Notice::Warning(format!(
                        "memory provider '{other}' (plugin) is off for this session: {e}"
                    )));
                    None
                }
            }
        }
    }
}
