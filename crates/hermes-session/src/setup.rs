//! What every session is built from: the environment (with `.env`), the Hermes
//! home and the layered configuration, loaded once per process.

use std::sync::Arc;

use hermes_llm::credentials::{AuthStore, SplitMix64, SystemClock};
use hermes_state::{Config, Env, HermesHome};

use crate::endpoint::{self, Endpoint, SetupError};
use crate::error::SessionError;

/// The loaded environment, home and configuration.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The environment the process was given, overlaid with `$HERMES_HOME/.env`.
    pub env: Env,
    /// The Hermes home.
    pub home: HermesHome,
    /// `config.yaml` over the defaults (or the defaults alone).
    pub config: Config,
}

impl Setup {
    /// Loads the home named by `env` (`HERMES_HOME`, else `~/.hermes`), its
    /// `.env` over `env`, and `config.yaml` unless `ignore_user_config`.
    pub fn load(mut env: Env, ignore_user_config: bool) -> Result<Self, SessionError> {
        let home =
            HermesHome::from_env(env.get("HERMES_HOME"), env.get("HOME")).ok_or_else(|| {
                SessionError::Setup("cannot locate the Hermes home: set HERMES_HOME or HOME".into())
            })?;
        env.load_dotenv(&home.env_file()).map_err(|e| {
            SessionError::Setup(format!("cannot read {}: {e}", home.env_file().display()))
        })?;
        let config = if ignore_user_config {
            Config::without_user_file(&env)
        } else {
            Config::load(&home.config_file(), &env)
                .map_err(|e| SessionError::Setup(e.to_string()))?
        };
        Ok(Self { env, home, config })
    }

    /// Whether the environment variable `name` says yes (`1`, `true`, `yes`,
    /// `on`, as the reference reads its switches).
    pub fn env_flag(&self, name: &str) -> bool {
        self.env.get(name).is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
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

    /// The endpoint the flags and configuration select.
    pub fn endpoint(
        &self,
        flag_provider: Option<&str>,
        flag_model: Option<&str>,
    ) -> Result<Endpoint, SetupError> {
        endpoint::resolve_with_pool(
            &self.config,
            &self.env,
            flag_provider,
            flag_model,
            &self.home.root().display().to_string(),
            &|p| self.has_pooled_keys(p),
        )
    }
}
