//! Honcho (<https://honcho.dev>) as a memory provider: `memory.provider:
//! honcho`. Settings come from `honcho.json` and the `HONCHO_*` variables
//! as the reference reads them; the provider talks to Honcho's v3 REST API
//! over the process's HTTP client.

mod api;
mod core;
mod provider;
pub mod settings;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;

pub use provider::Honcho;
pub use settings::{HonchoSettings, RecallMode, SessionStrategy, Sources};

impl Honcho {
    /// A provider for a session on `platform` started in `cwd`; it reaches
    /// Honcho only when first used. Needs a tokio runtime (the current one).
    pub fn open(
        settings: HonchoSettings,
        http: reqwest::Client,
        cwd: PathBuf,
        platform: &str,
    ) -> Result<Self, String> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| "the Honcho provider needs a tokio runtime".to_owned())?;
        let api = api::Api::new(&settings, http)?;
        Ok(Self {
            core: Arc::new(core::Core::new(settings, api, runtime, cwd, platform)),
        })
    }
}

#[cfg(test)]
mod tests;
