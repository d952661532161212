//! `memory.provider`: which external memory provider a session gets (at
//! most one), opened from its settings. `holographic` and `honcho` are
//! built in; another name is an enabled plugin's (`provides_memory_provider`); a name nothing
//! provides is a warning and the session goes on with the built-in memory.

use std::sync::Arc;

use hermes_tools::builtin::holographic::{Holographic, HolographicSettings};
use hermes_tools::memory_provider::MemoryProvider;

use crate::services::Services;
use crate::setup::Setup;
use crate::spec::{Notice, SessionSpec};

/// The provider `memory.provider` names, opened for `spec`'s session;
/// `None` when none is set or it cannot open (said in `notices`).
pub(crate) async fn open(
    services: &Services,
    spec: &SessionSpec,
    notices: &mut Vec<Notice>,
) -> Option<Arc<dyn MemoryProvider>> {
    let setup = services.setup();
    let platform = spec.source.as_str();
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
        "honcho" => match honcho(services, spec) {
            Ok(provider) => Some(Arc::new(provider)),
            Err(e) => {
                notices.push(Notice::Warning(format!(
                    "memory provider 'honcho' is off for this session: {e}"
                )));
                None
            }
        },
        other => {
            let Some(plugin) = crate::plugins::memory_provider_plugin(setup, other) else {
                notices.push(Notice::Warning(format!(
                    "memory provider '{other}' is not available: not built in \
                     (holographic and honcho are) and no enabled plugin provides it; \
                     the session uses the built-in memory only"
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

/// The Honcho provider from honcho.json, the `HONCHO_*` variables and
/// config.yaml's `honcho:` section.
fn honcho(services: &Services, spec: &SessionSpec) -> Result<hermes_honcho::Honcho, String> {
    let setup: &Setup = services.setup();
    let env = |k: &str| setup.env.get(k).map(str::to_owned);
    let yaml = setup.config.raw.get("honcho").cloned().unwrap_or_default();
    let user_home = setup.env.get("HOME").map(std::path::Path::new);
    let sources = hermes_honcho::Sources {
        hermes_home: setup.home.root(),
        user_home,
        env: &env,
        yaml: &yaml,
    };
    let settings = hermes_honcho::HonchoSettings::resolve(&sources)?.ok_or_else(|| {
        "it is not set up: set HONCHO_API_KEY (or HONCHO_BASE_URL for a self-hosted \
         server) in .env, or write honcho.json in HERMES_HOME"
            .to_owned()
    })?;
    let http = services.http().map_err(|e| e.to_string())?;
    hermes_honcho::Honcho::open(settings, http.client(), spec.cwd.clone(), &spec.source)
}
