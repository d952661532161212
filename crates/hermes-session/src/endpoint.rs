//! Choosing the provider, endpoint, key and model from flags, config and environment.

use hermes_llm::BedrockAuth;
use hermes_llm::api_mode::{self, ApiMode};
use hermes_llm::bedrock;
use hermes_llm::providers::{self, ProviderSpec};
use hermes_state::{Config, Env};

/// A model endpoint: provider, URL, key, model and wire protocol.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Canonical provider id.
    pub provider: String,
    /// Endpoint root (…/v1).
    pub base_url: String,
    /// API key, if any.
    pub api_key: Option<String>,
    /// Model id; `None` means ask the endpoint (custom servers).
    pub model: Option<String>,
    /// The wire protocol.
    pub api_mode: ApiMode,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("model", &self.model)
            .finish()
    }
}

impl Endpoint {
    /// The embedded model; `model` is a GGUF path (`None`: the default file).
    pub fn local(model: Option<String>) -> Self {
        Self {
            provider: "local".into(),
            base_url: String::new(),
            api_key: None,
            model,
            api_mode: ApiMode::ChatCompletions,
        }
    }
}

/// Why no endpoint could be chosen; each says what to do.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SetupError {
    /// Nothing configured at all.
    #[error(
        "No inference provider is configured. Set one up in any of these ways:\n  \
         • run `hermes setup` (asks for a provider and key, or sets up the local model)\n  \
         • run `hermes model pull smollm2` for the small built-in model: offline, no key\n  \
         • put OPENROUTER_API_KEY=… in {home}/.env (provider openrouter)\n  \
         • put OPENAI_API_KEY=… in {home}/.env (provider openai)\n  \
         • point at any OpenAI-compatible server: in {home}/config.yaml set\n      \
         model:\n        provider: custom\n        base_url: http://localhost:8080/v1\n    \
         or pass --provider custom with CUSTOM_BASE_URL=http://… in the environment"
    )]
    NoProvider {
        /// HERMES_HOME, for the message.
        home: String,
    },
    /// `--provider` / `model.provider` names something unknown.
    #[error("Unknown provider '{name}'. Known providers: {known}.")]
    UnknownProvider {
        /// What was asked for.
        name: String,
        /// Comma-separated names.
        known: String,
    },
    /// The provider needs a key that is not set.
    #[error("Provider '{provider}' needs an API key: set {var} in {home}/.env or the environment.")]
    MissingKey {
        /// Provider id.
        provider: String,
        /// Env var to set.
        var: String,
        /// HERMES_HOME, for the message.
        home: String,
    },
    /// `custom` without an endpoint.
    #[error(
        "Provider 'custom' needs the server's URL: set model.base_url in {home}/config.yaml \
         (e.g. http://localhost:8080/v1) or CUSTOM_BASE_URL in the environment."
    )]
    MissingBaseUrl {
        /// HERMES_HOME, for the message.
        home: String,
    },
    /// Bedrock without AWS credentials in the environment.
    #[error(
        "No AWS credentials found for Bedrock. Put one of these in {home}/.env or the environment:\n  \
         • AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary credentials)\n  \
         • AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key)\n\
         Profiles, SSO and instance roles are not read by this build: for a profile, run\n  \
         aws configure export-credentials --format env\n\
         and put its output in {home}/.env. Set the region with AWS_REGION or bedrock.region in config.yaml."
    )]
    NoAwsCredentials {
        /// HERMES_HOME, for the message.
        home: String,
    },
}

/// The Bedrock credentials in `env` (see [`BedrockAuth::from_vars`]).
pub fn bedrock_auth(env: &Env) -> Option<BedrockAuth> {
    BedrockAuth::from_vars(|k| env.get(k).map(str::to_owned))
}

/// The Bedrock region: `bedrock.region` in config.yaml, then `AWS_REGION`,
/// `AWS_DEFAULT_REGION`, then `us-east-1`.
pub fn bedrock_region(cfg: &Config, env: &Env) -> String {
    let configured = cfg.sections.bedrock.region.as_deref();
    bedrock::resolve_region(configured, |k| env.get(k).map(str::to_owned))
}

/// `prompt_caching.cache_ttl` (`5m` unless `1h`).
pub fn cache_ttl(config: &Config) -> hermes_llm::CacheTtl {
    config
        .sections
        .prompt_caching
        .cache_ttl
        .as_deref()
        .and_then(hermes_llm::CacheTtl::parse)
        .unwrap_or_default()
}

/// Prompt caching on chat completions, as the reference enables it: Claude and Kimi
/// models behind OpenRouter (or Nous Portal, which proxies to it) honour Anthropic-style
/// breakpoints in the message envelope. `prompt_caching.cache_ttl` picks 5m or 1h.
pub fn envelope_cache(rt: &Endpoint, config: &Config) -> Option<hermes_llm::CacheTtl> {
    let model = rt.model.as_deref().unwrap_or("").to_ascii_lowercase();
    let host = hermes_llm::api_mode::host_of(&rt.base_url);
    let gateway = host == "openrouter.ai"
        || host.ends_with(".openrouter.ai")
        || rt.base_url.to_ascii_lowercase().contains("nousresearch");
    let family = ["claude", "kimi", "moonshot"]
        .iter()
        .any(|f| model.contains(f));
    (gateway && family).then(|| cache_ttl(config))
}

/// Resolves the endpoint. `home` only appears in messages.
#[cfg(test)]
pub fn resolve(
    cfg: &Config,
    env: &Env,
    flag_provider: Option<&str>,
    flag_model: Option<&str>,
    home: &str,
) -> Result<Endpoint, SetupError> {
    resolve_with_pool(cfg, env, flag_provider, flag_model, home, &|_| false)
}

/// [`resolve`], where `pooled(provider)` says whether `auth.json` holds keys for it
/// (then no key in the environment is needed).
pub fn resolve_with_pool(
    cfg: &Config,
    env: &Env,
    flag_provider: Option<&str>,
    flag_model: Option<&str>,
    home: &str,
    pooled: &dyn Fn(&str) -> bool,
) -> Result<Endpoint, SetupError> {
    let cfg_provider = cfg
        .model
        .provider
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let requested = requested_provider(cfg, env, flag_provider.or(cfg_provider), home)?;
    if requested == "local" {
        // The model is a GGUF path; the caller fills in the default file when unset.
        let model = flag_model
            .or(cfg.model.default.as_deref())
            .map(str::trim)
            .filter(|m| !m.is_empty());
        return Ok(Endpoint::local(model.map(str::to_owned)));
    }
    if let Some(user) = user_provider(cfg, env, &requested, flag_model) {
        return Ok(user);
    }
    let spec = providers::find(&requested).ok_or_else(|| SetupError::UnknownProvider {
        name: requested.clone(),
        known: providers::known_names().join(", "),
    })?;
    // Config's base_url/api_key belong to the provider the config names (or to auto/custom).
    let cfg_applies = match cfg_provider.map(|p| providers::find(p).map(|s| s.id)) {
        None => true,
        Some(Some(id)) => id == spec.id,
        Some(None) => cfg_provider == Some("auto"),
    };
    let base_url = base_url_for(spec, cfg, env, cfg_applies, home)?;
    let cfg_key = cfg
        .model
        .api_key
        .as_deref()
        .filter(|_| cfg_applies)
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let api_key = cfg_key
        .or_else(|| spec.key_env.iter().find_map(|v| env.get(v)))
        .map(str::to_owned);
    if spec.id == "bedrock" && bedrock_auth(env).is_none() {
        return Err(SetupError::NoAwsCredentials {
            home: home.to_owned(),
        });
    }
    if api_key.is_none() && !spec.key_optional && !pooled(spec.id) {
        return Err(SetupError::MissingKey {
            provider: spec.id.to_owned(),
            var: spec
                .key_env
                .first()
                .copied()
                .unwrap_or("API_KEY")
                .to_owned(),
            home: home.to_owned(),
        });
    }
    let model = flag_model
        .or_else(|| env.get("HERMES_INFERENCE_MODEL"))
        .or(cfg.model.default.as_deref())
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .or(spec.default_model)
        .map(str::to_owned);
    // Like the reference, a plain custom endpoint ignores a (possibly stale)
    // `api_mode: codex_responses` unless its URL is OpenAI's or xAI's; a named
    // provider under `providers:` opts in with `transport: codex_responses`.
    let explicit = cfg
        .model
        .api_mode
        .as_deref()
        .filter(|_| cfg_applies)
        .filter(|m| {
            spec.id != "custom"
                || ApiMode::parse(m) != Some(ApiMode::CodexResponses)
                || api_mode::mode_for_url(&base_url) == Some(ApiMode::CodexResponses)
        });
    let api_mode = api_mode::resolve(explicit, spec.api_mode, &base_url);
    Ok(Endpoint {
        provider: spec.id.to_owned(),
        base_url,
        api_key,
        model,
        api_mode,
    })
}

/// The provider asked for (flag, else config, else `auto`), `auto` resolved
/// by what is configured.
fn requested_provider(
    cfg: &Config,
    env: &Env,
    asked: Option<&str>,
    home: &str,
) -> Result<String, SetupError> {
    let requested = asked.unwrap_or("auto").trim().to_ascii_lowercase();
    if requested == "auto" {
        auto_detect(cfg, env, home)
    } else {
        Ok(requested)
    }
}

/// The provider's base URL: its environment variable, else config's (when
/// config is about this provider), else the region's (Bedrock), else the
/// provider's own.
fn base_url_for(
    spec: &ProviderSpec,
    cfg: &Config,
    env: &Env,
    cfg_applies: bool,
    home: &str,
) -> Result<String, SetupError> {
    let cfg_base = cfg
        .model
        .base_url
        .as_deref()
        .filter(|_| cfg_applies)
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let env_base = spec.base_url_env.and_then(|v| env.get(v));
    // Bedrock's endpoint follows the region.
    let region_endpoint =
        (spec.id == "bedrock").then(|| bedrock::endpoint_for_region(&bedrock_region(cfg, env)));
    env_base
        .or(cfg_base)
        .or(region_endpoint.as_deref())
        .or(spec.base_url)
        .map(|u| u.trim().trim_end_matches('/').to_owned())
        .ok_or_else(|| SetupError::MissingBaseUrl {
            home: home.to_owned(),
        })
}

fn auto_detect(cfg: &Config, env: &Env, home: &str) -> Result<String, SetupError> {
    let pick = |spec: &ProviderSpec| spec.id.to_owned();
    if cfg
        .model
        .base_url
        .as_deref()
        .is_some_and(|u| !u.trim().is_empty())
        || env.get("CUSTOM_BASE_URL").is_some()
    {
        return Ok("custom".into());
    }
    for id in ["openrouter", "openai"] {
        if let Some(spec) =
            providers::find(id).filter(|s| s.key_env.iter().any(|v| env.get(v).is_some()))
        {
            return Ok(pick(spec));
        }
    }
    Err(SetupError::NoProvider {
        home: home.to_owned(),
    })
}

#[cfg(test)]
#[path = "endpoint_tests.rs"]
mod tests;

/// The `fallback_providers:` entries of config.yaml, resolved in order:
/// `{provider, model, base_url?, api_key?, key_env?}`.
pub fn fallbacks(cfg: &Config, env: &Env) -> Result<Vec<Endpoint>, String> {
    let Some(entries) = cfg
        .get("fallback_providers")
        .and_then(serde_json::Value::as_array)
    else {
        return Ok(Vec::new());
    };
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let field = |k: &str| {
                entry
                    .get(k)
                    .and_then(serde_json::Value::as_str)
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
            };
            let where_ = format!("fallback_providers[{i}]");
            let name = field("provider").ok_or_else(|| format!("{where_} needs a 'provider'"))?;
            let model = field("model").ok_or_else(|| format!("{where_} needs a 'model'"))?;
            let spec = providers::find(name).ok_or_else(|| {
                format!(
                    "{where_}: unknown provider '{name}'. Known providers: {}",
                    providers::known_names().join(", ")
                )
            })?;
            let base_url = field("base_url")
                .or_else(|| spec.base_url_env.and_then(|v| env.get(v)))
                .or(spec.base_url)
                .ok_or_else(|| format!("{where_}: provider '{name}' needs a 'base_url'"))?
                .trim_end_matches('/')
                .to_owned();
            let api_key = field("api_key")
                .or_else(|| field("key_env").and_then(|v| env.get(v)))
                .or_else(|| spec.key_env.iter().find_map(|v| env.get(v)))
                .map(str::to_owned);
            let api_mode = api_mode::resolve(field("api_mode"), spec.api_mode, &base_url);
            Ok(Endpoint {
                provider: spec.id.to_owned(),
                base_url,
                api_key,
                model: Some(model.to_owned()),
                api_mode,
            })
        })
        .collect()
}

/// A provider defined under `providers:` in config.yaml:
/// `{name?, api|url|base_url, key_env?, api_key?, transport?, default_model?}`.
fn user_provider(
    cfg: &Config,
    env: &Env,
    name: &str,
    flag_model: Option<&str>,
) -> Option<Endpoint> {
    let entry = cfg.get("providers")?.get(name)?;
    let field = |k: &str| {
        entry
            .get(k)
            .and_then(serde_json::Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let base_url = field("api")
        .or_else(|| field("url"))
        .or_else(|| field("base_url"))?
        .trim_end_matches('/')
        .to_owned();
    let api_key = field("api_key")
        .or_else(|| field("key_env").and_then(|v| env.get(v)))
        .map(str::to_owned);
    let transport = match field("transport") {
        Some("anthropic_messages" | "anthropic") => Some(ApiMode::AnthropicMessages),
        Some("codex_responses" | "openai_responses") => Some(ApiMode::CodexResponses),
        Some("bedrock_converse" | "bedrock") => Some(ApiMode::BedrockConverse),
        Some(_) => Some(ApiMode::ChatCompletions),
        None => None,
    };
    let model = flag_model
        .or_else(|| env.get("HERMES_INFERENCE_MODEL"))
        .or(cfg.model.default.as_deref())
        .or_else(|| field("default_model"))
        .map(str::to_owned);
    let api_mode = api_mode::resolve(cfg.model.api_mode.as_deref(), transport, &base_url);
    Some(Endpoint {
        provider: name.to_owned(),
        base_url,
        api_key,
        model,
        api_mode,
    })
}
