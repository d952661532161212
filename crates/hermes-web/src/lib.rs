//! The web tools: `web_search` over the reference's backends (DuckDuckGo
//! when none is set up) and `web_extract`, which reads pages through an
//! extract backend or fetches and converts them itself, every hop checked
//! against the URL policy.

pub mod browser;
pub mod dom;
pub mod extract;
mod http;
pub mod search;
pub mod settings;
mod vendors;
pub mod vision;

use std::sync::Arc;

use hermes_tools::Tool;

pub use settings::WebSettings;

/// The web tools for `settings`, sharing `http` for backend calls.
pub fn tools(settings: WebSettings, http: reqwest::Client) -> Result<Vec<Arc<dyn Tool>>, String> {
    let settings = Arc::new(settings);
    Ok(vec![
        Arc::new(search::WebSearchTool::new(settings.clone(), http.clone())),
        Arc::new(extract::WebExtractTool::new(settings, http)?),
    ])
}
