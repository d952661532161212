//! What a session on this machine would offer the model, tool by tool, and
//! why a tool is not offered: for `hermes tools list`, which must show what
//! the model really gets rather than what the configuration asks for.

use std::collections::BTreeMap;
use std::sync::Arc;

use hermes_agent::code_exec::{self, CodeExecSettings};
use hermes_tools::Registry;

use crate::services::Services;

/// Why a tool the configuration asks for is not offered (or `Ok`).
pub type Offer = Result<(), String>;

/// One tool as this binary would offer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOffer {
    /// Its toolset.
    pub toolset: String,
    /// Whether it is offered, or why not.
    pub offer: Offer,
}

/// Every tool this binary can offer, by name, with its toolset and whether it
/// can run here now (a missing key, browser or setting says why not). Tools
/// the binary does not have are absent ([`NOT_HERE`]).
pub fn tools_here(services: &Services) -> BTreeMap<String, ToolOffer> {
    let setup = services.setup();
    let mut all = Registry::with_builtins();
    all.register(Arc::new(
        hermes_tools::builtin::session_search::SessionSearchTool::new(setup.home.state_db()),
    ));
    if let Ok(http) = services.http() {
        let web = services.web();
        for tool in hermes_web::tools(web.settings.clone(), http.client(), web.fetcher.clone()) {
            all.register(tool);
        }
    }
    crate::assemble::register_home_assistant(services, &mut all);
    code_exec::register(
        &mut all,
        CodeExecSettings::from_section(&setup.config.sections.code_execution),
    );
    let mut here: BTreeMap<String, ToolOffer> = all
        .names()
        .filter_map(|name| {
            let tool = all.get(name)?;
            Some((
                name.to_owned(),
                ToolOffer {
                    toolset: tool.toolset().to_owned(),
                    offer: tool.check(),
                },
            ))
        })
        .collect();
    let mut put = |name: &str, toolset: &str, offer: Offer| {
        here.insert(
            name.to_owned(),
            ToolOffer {
                toolset: toolset.to_owned(),
                offer,
            },
        );
    };
    // Tools made per session (they need its model or memory): whether they
    // will be there is decided by settings read here.
    put("delegate_task", "delegation", Ok(()));
    put("cronjob", "cronjob", Ok(()));
    put("vision_analyze", "vision", Ok(()));
    let memory = if setup.config.sections.memory.memory_enabled == Some(false) {
        Err("memory.memory_enabled is false".to_owned())
    } else {
        Ok(())
    };
    put("memory", "memory", memory);
    // The browser's tools are made per session, on a Chromium this machine
    // has: their names come from the tools themselves when it has one.
    match &services.web().browser {
        Some(settings) => {
            let slot = hermes_web::browser::BrowserSlot::new(settings.clone());
            for tool in hermes_web::browser::tools::all(&slot, None) {
                put(tool.name(), tool.toolset(), Ok(()));
            }
            // Offered with a model that reads images, as vision_analyze is.
            put("browser_vision", "browser", Ok(()));
        }
        None => {
            let browser = hermes_tools::toolsets::find("browser").map_or(&[][..], |d| d.tools);
            for name in browser.iter().filter(|n| n.starts_with("browser_")) {
                put(
                    name,
                    "browser",
                    Err(
                        "no Chromium found: install chromium (or set browser.executable)"
                            .to_owned(),
                    ),
                );
            }
        }
    }
    here
}

/// Why a tool the reference has is not in [`tools_here`].
pub const NOT_HERE: &str = "not in hermes-rs yet";
