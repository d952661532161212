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

/// The web tools for `settings`: `http` for backend calls, `fetcher` (see
/// [`extract::fetch::Fetcher`]) for pages fetched here. Both clients are
/// meant to be made once per process and shared.
pub fn tools(
    settings: Arc<WebSettings>,
    http: reqwest::Client,
    fetcher: extract::fetch::Fetcher,
) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(search::WebSearchTool::new(settings.clone(), http.clone())),
        Arc::new(extract::WebExtractTool::new(settings, http, fetcher)),
    ]
}
