//! The session's tools: the built-in registry with session search,
//! delegation, memory, web, Home Assistant, sight, cron and code execution,
//! cut to the session's toolsets, plus the plugins' tools.

use std::sync::Arc;

use hermes_agent::RetryPolicy;
use hermes_agent::code_exec::{self, CodeExecSettings};
use hermes_llm::Provider;
use hermes_tools::Registry;
use hermes_tools::builtin::memory::MemoryTool;
use hermes_tools::builtin::session_search::SessionSearchTool;

use crate::endpoint::Endpoint;
use crate::services::Services;
use crate::spec::Notice;

/// `web_search` and `web_extract`, as config.yaml and the keys set them up.
fn register_web(services: &Services, all: &mut Registry) {
    let Ok(http) = services.http() else {
        return;
    };
    let web = services.web();
    for tool in hermes_web::tools(web.settings.clone(), http.client(), web.fetcher.clone()) {
        all.register(tool);
    }
}

/// The `ha_*` tools (offered when `HASS_TOKEN` is set).
pub(crate) fn register_home_assistant(services: &Services, all: &mut Registry) {
    let Ok(http) = services.http() else {
        return;
    };
    let setup = services.setup();
    let settings =
        hermes_homeassistant::HaSettings::from_env(&|k| setup.env.get(k).map(str::to_owned));
    for tool in hermes_homeassistant::tools(settings, http.client()) {
        all.register(tool);
    }
}

/// The model that looks at images for this session, when one can.
fn vision_model(
    services: &Services,
    parent: (&Arc<dyn Provider>, &Endpoint),
) -> Option<Arc<dyn hermes_web::vision::VisionModel>> {
    let main = hermes_agent::Route {
        provider: parent.0.clone(),
        model: parent.1.model.clone().unwrap_or_default(),
    };
    let route = crate::auxiliary::vision(services, parent.1, &main).ok()??;
    Some(Arc::new(crate::auxiliary::VisionRoute(route)))
}

/// `vision_analyze` and the `browser_*` tools (when a Chromium is installed).
fn register_sight(
    services: &Services,
    parent: (&Arc<dyn Provider>, &Endpoint),
    all: &mut Registry,
) {
    let web = services.web();
    let setup = services.setup();
    let vision = vision_model(services, parent);
    if let Some(model) = &vision {
        all.register(Arc::new(hermes_web::vision::VisionTool::new(
            model.clone(),
            web.settings.policy,
            setup.home.root().to_path_buf(),
            web.fetcher.clone(),
        )));
    }
    // One browser per session, started only if a tool is used.
    if let Some(browser) = &web.browser {
        let slot = hermes_web::browser::BrowserSlot::new(browser.clone());
        for tool in hermes_web::browser::tools::all(&slot, vision) {
            all.register(tool);
        }
    }
}

/// The tools of the enabled plugins (each plugin started on first need).
pub(super) async fn plugin_tools(
    services: &Services,
    notices: &mut Vec<Notice>,
) -> Vec<Arc<dyn hermes_tools::Tool>> {
    let mut tools: Vec<Arc<dyn hermes_tools::Tool>> = Vec::new();
    for plugin in services.plugins() {
        if !plugin.declares_tools() {
            continue;
        }
        match plugin.tool_schemas().await {
            Ok(schemas) => {
                for schema in schemas {
                    tools.push(Arc::new(hermes_tools::hooks::PluginTool::new(
                        plugin.clone(),
                        schema,
                    )));
                }
            }
            Err(e) => notices.push(Notice::Warning(format!(
                "plugin {}: {e}; its tools are not offered",
                plugin.name()
            ))),
        }
    }
    tools
}

/// Every tool the session offers: the built-ins, session search, delegation,
/// memory and code execution, cut down to `toolsets`, then the plugins'
/// tools (a plugin tool never replaces a built-in); with the names in
/// `toolsets` that are neither a toolset nor a tool.
#[allow(clippy::too_many_arguments)]
pub(super) fn registry(
    services: &Services,
    parent: (&Arc<dyn Provider>, &Endpoint),
    fallbacks: &[(Arc<dyn Provider>, String)],
    retry: RetryPolicy,
    memory: Option<&MemoryTool>,
    toolsets: &[String],
    scheduling: bool,
    plugin_tools: Vec<Arc<dyn hermes_tools::Tool>>,
) -> (Registry, Vec<String>) {
    let setup = services.setup();
    let mut all = Registry::with_builtins();
    all.share_schemas_through(services.schema_interner().clone());
    all.register(Arc::new(match services.shared() {
        // Replicas: the history is the shared database's, not this host's state.db.
        Some(shared) => SessionSearchTool::shared(shared.history),
        None => SessionSearchTool::new(setup.home.state_db()),
    }));
    all.register(Arc::new(crate::delegation::delegate_tool(
        services, parent, fallbacks, retry,
    )));
    if let Some(tool) = memory {
        all.register(Arc::new(tool.clone()));
    }
    register_web(services, &mut all);
    register_home_assistant(services, &mut all);
    register_sight(services, parent, &mut all);
    // A scheduled run must not schedule more runs.
    if scheduling {
        all.register(Arc::new(crate::cron::tool::CronjobTool::new(
            crate::SessionManager::with_services(services.clone()),
        )));
    }
    // Registered before filtering so the toolsets decide whether it is offered;
    // rebuilt after so its sandbox lists only the tools this session really has.
    let settings = CodeExecSettings::from_section(&setup.config.sections.code_execution);
    code_exec::register(&mut all, settings.clone());
    let (mut tools, unknown) = all.filtered(toolsets);
    let disabled = setup.config.disabled_toolsets();
    if !disabled.is_empty() {
        let (off, _) = tools.filtered(&disabled);
        let names: Vec<String> = off.names().map(str::to_owned).collect();
        for name in names {
            tools.unregister(&name);
        }
    }
    for tool in plugin_tools {
        if all.get(tool.name()).is_none() {
            tools.register(tool);
        }
    }
    code_exec::refresh(&mut tools, settings);
    (tools, unknown)
}
