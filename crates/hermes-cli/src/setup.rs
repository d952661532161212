//! What every command loads first: the environment (with `.env`), the Hermes home
//! and the layered configuration.

use std::sync::Arc;

use anyhow::{Context, Result};
use hermes_llm::credentials::{AuthStore, SplitMix64, SystemClock};
use hermes_state::{Config, Env, HermesHome};

use crate::runtime::{self, Runtime, SetupError};

/// The loaded environment, home and configuration.
pub struct Setup {
    /// Process environment overlaid with `$HERMES_HOME/.env`.
    pub env: Env,
    /// The Hermes home.
    pub home: HermesHome,
    /// `config.yaml` over the defaults (or the defaults alone).
    pub config: Config,
}

impl Setup {
    /// Loads all three; `ignore_user_config` skips `config.yaml`.
    pub fn load(ignore_user_config: bool) -> Result<Self> {
        let mut env = Env::from_pairs(std::env::vars());
        let home = HermesHome::from_env(env.get("HERMES_HOME"), env.get("HOME"))
            .context("cannot locate the Hermes home: set HERMES_HOME or HOME")?;
        env.load_dotenv(&home.env_file())
            .with_context(|| format!("cannot read {}", home.env_file().display()))?;
        let config = if ignore_user_config {
            Config::without_user_file(&env)
        } else {
            Config::load(&home.config_file(), &env)?
        };
        Ok(Self { env, home, config })
    }

    /// Whether `auth.json` holds pooled keys for `provider`.
    pub fn has_pooled_keys(&self, provider: &str) -> bool {
        let auth_path = self.home.root().join("auth.json");
        auth_path.is_file()
            && AuthStore::new(
                &auth_path,
                Arc::new(SystemClock),
                Box::new(SplitMix64::new(0)),
            )
            .list(provider)
            .is_ok_and(|keys| !keys.is_empty())
    }

    /// The runtime the flags and configuration select.
    pub fn runtime(
        &self,
        flag_provider: Option<&str>,
        flag_model: Option<&str>,
    ) -> Result<Runtime, SetupError> {
        runtime::resolve_with_pool(
            &self.config,
            &self.env,
            flag_provider,
            flag_model,
            &self.home.root().display().to_string(),
            &|p| self.has_pooled_keys(p),
        )
    }
}
