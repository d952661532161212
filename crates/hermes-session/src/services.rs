//! What every session of a process shares: the loaded setup, one HTTP
//! connection pool, one provider per endpoint (so one credential pool per
//! provider, and the embedded model loaded once), and one session store.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use hermes_llm::api_mode::ApiMode;
use hermes_llm::credentials::{
    BuildWithKey, CredentialPool, PooledProvider, Strategy, SystemClock,
};
use hermes_llm::{ChatCompletionsConfig, ChatCompletionsProvider, LlmError, Provider, SharedHttp};

use crate::endpoint::{self, Endpoint, SetupError};
use crate::error::SessionError;
use crate::setup::Setup;
use crate::store::SessionStore;

/// Installed skills as (name, description).
type SkillsIndex = Vec<(String, String)>;

/// How long a skills index read for one session serves the next ones.
pub const SKILLS_INDEX_FRESH: Duration = Duration::from_secs(2);

/// How long a new TCP/TLS connection to a provider may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Shared resources; cheap to clone (everything is behind `Arc`s).
#[derive(Clone)]
pub struct Services {
    inner: Arc<Inner>,
}

/// The process's hooks and its enabled plugins.
type Extensions = (
    Arc<hermes_tools::hooks::Hooks>,
    Vec<Arc<hermes_tools::hooks::PluginHook>>,
);

struct Inner {
    setup: Setup,
    http: OnceLock<Result<SharedHttp, String>>,
    providers: Mutex<HashMap<String, Arc<dyn Provider>>>,
    /// Opened on first use: a server answers health checks before it needs
    /// SQLite, and commands that record nothing never open it.
    store: OnceLock<Result<crate::stores::Opened, String>>,
    replica: OnceLock<String>,
    /// The MCP servers (connected on first use; `None` when none is configured).
    /// Whether the bundled skills were seeded this process (and why not).
    bundled_skills: OnceLock<Option<String>>,
    /// The installed skills' index and when it was read.
    skills_index: Mutex<Option<(std::time::Instant, SkillsIndex)>>,
    /// Outer `None`: not started yet; inner `None`: no server configured.
    mcp: Mutex<Option<Option<hermes_mcp::McpHub>>>,
    /// Sessions offering the same tools share one copy of their schemas.
    schemas: hermes_tools::SchemaInterner,
    /// The web tools' settings and clients (made on first use).
    web: OnceLock<WebShared>,
    /// Where cron answers are sent (the gateway's platforms), once set.
    cron_delivery: OnceLock<Arc<dyn crate::cron::deliver::CronDelivery>>,
    /// The lifecycle hooks and plugins (installed by the front-end, else loaded on first use).
    hooks: OnceLock<Extensions>,
    /// MCP servers clients added (`mcp_servers:` entries by name).
    extra_mcp: Mutex<serde_json::Map<String, serde_json::Value>>,
    /// Sees every event of every session (the gateway's logs), once set.
    event_tap: OnceLock<EventTap>,
    /// Where MCP OAuth logins can be completed, when a person is present.
    mcp_oauth_prompt: OnceLock<Arc<dyn hermes_mcp::oauth::OAuthPrompt>>,
}

/// Sees each event a session sends its front-end, with the session's id and
/// platform (`source`): how a long-running front-end logs every session.
pub type EventTap = Arc<dyn Fn(&TappedSession<'_>, &hermes_protocol::Event) + Send + Sync>;

/// Which session a tapped event came from.
#[derive(Debug, Clone, Copy)]
pub struct TappedSession<'a> {
    /// The session id.
    pub id: &'a str,
    /// The id the conversation started under: stable while compression or
    /// `/new` move it to other session ids.
    pub conversation: &'a str,
    /// Where it runs: `cli`, `telegram`, `api_server`, `cron`, ….
    pub source: &'a str,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let slot = self.mcp.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(Some(hub)) = slot {
            hub.shutdown();
        }
    }
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("home", &self.inner.setup.home)
            .finish_non_exhaustive()
    }
}

impl Services {
    /// Services over `setup`, with `state.db` in its home as the store. A store
    /// that cannot be opened turns history off (see [`Services::store_problem`]).
    pub fn new(setup: Setup) -> Self {
        Self::build(setup, OnceLock::new())
    }

    /// Services that record nothing (for commands that only talk to providers).
    pub fn without_store(setup: Setup) -> Self {
        Self::with_store(setup, Err("no session store in this command".into()))
    }

    /// Services over `setup` with another opened store (or none, with the reason).
    pub fn with_store(setup: Setup, store: Result<crate::stores::Opened, String>) -> Self {
        Self::build(setup, OnceLock::from(store))
    }

    fn build(setup: Setup, store: OnceLock<Result<crate::stores::Opened, String>>) -> Self {
        Self {
            inner: Arc::new(Inner {
                setup,
                http: OnceLock::new(),
                providers: Mutex::new(HashMap::new()),
                store,
                replica: OnceLock::new(),
                bundled_skills: OnceLock::new(),
                skills_index: Mutex::new(None),
                mcp: Mutex::new(None),
                schemas: hermes_tools::SchemaInterner::default(),
                cron_delivery: OnceLock::new(),
                web: OnceLock::new(),
                hooks: OnceLock::new(),
                extra_mcp: Mutex::new(serde_json::Map::new()),
                event_tap: OnceLock::new(),
                mcp_oauth_prompt: OnceLock::new(),
            }),
        }
    }

    fn opened_store(&self) -> &Result<crate::stores::Opened, String> {
        self.inner
            .store
            .get_or_init(|| crate::stores::open(&self.inner.setup))
    }

    /// Where sessions' registries share equal tool schemas.
    pub fn schema_interner(&self) -> &hermes_tools::SchemaInterner {
        &self.inner.schemas
    }

    /// Sets the process's hooks (a front-end that asked for consent); `false`
    /// when sessions already use others.
    pub fn install_hooks(&self, loaded: crate::hooks::LoadedHooks) -> bool {
        self.inner
            .hooks
            .set((Arc::new(loaded.hooks), loaded.plugins))
            .is_ok()
    }

    fn extensions(&self) -> &Extensions {
        self.inner.hooks.get_or_init(|| {
            let loaded = crate::hooks::load_hooks(&self.inner.setup, false, None);
            (Arc::new(loaded.hooks), loaded.plugins)
        })
    }

    /// The enabled plugins (their tools join every session).
    pub fn plugins(&self) -> Vec<Arc<hermes_tools::hooks::PluginHook>> {
        self.extensions().1.clone()
    }

    /// The process's hooks: those installed, else the approved and
    /// auto-accepted ones (nobody is asked).
    pub fn hooks(&self) -> Arc<hermes_tools::hooks::Hooks> {
        self.extensions().0.clone()
    }

    /// What every session's web, vision and browser tools share: read from
    /// the setup and made once per process.
    pub fn web(&self) -> &WebShared {
        self.inner
            .web
            .get_or_init(|| WebShared::new(&self.inner.setup))
    }

    /// Sends cron answers through `sender` from now on (the first one set wins).
    pub fn set_cron_delivery(&self, sender: Arc<dyn crate::cron::deliver::CronDelivery>) {
        let _ = self.inner.cron_delivery.set(sender);
    }

    /// Shows every session's events to `tap` from now on (the first one set wins).
    pub fn set_event_tap(&self, tap: EventTap) {
        let _ = self.inner.event_tap.set(tap);
    }

    /// Lets MCP servers that need an OAuth login get one through `prompt`
    /// (set before the first session starts; the first one set wins).
    pub fn set_mcp_oauth_prompt(&self, prompt: Arc<dyn hermes_mcp::oauth::OAuthPrompt>) {
        let _ = self.inner.mcp_oauth_prompt.set(prompt);
    }

    /// What sees every session's events, when a front-end set one.
    pub fn event_tap(&self) -> Option<EventTap> {
        self.inner.event_tap.get().cloned()
    }

    /// Where cron answers go, when a gateway's platforms are there.
    pub fn cron_delivery(&self) -> Option<Arc<dyn crate::cron::deliver::CronDelivery>> {
        self.inner.cron_delivery.get().cloned()
    }

    fn mcp_oauth_prompt(&self) -> Option<Arc<dyn hermes_mcp::oauth::OAuthPrompt>> {
        self.inner.mcp_oauth_prompt.get().cloned()
    }

    /// The setup every session is built from.
    pub fn setup(&self) -> &Setup {
        &self.inner.setup
    }

    /// The session store, when it could be opened.
    pub fn store(&self) -> Option<Arc<dyn SessionStore>> {
        self.opened_store()
            .as_ref()
            .ok()
            .map(|o| Arc::clone(&o.sessions))
    }

    /// Listing, exporting and deleting sessions, when the store could be opened.
    pub fn admin(&self) -> Option<Arc<dyn hermes_state::store::SessionAdmin>> {
        self.opened_store()
            .as_ref()
            .ok()
            .map(|o| Arc::clone(&o.admin))
    }

    /// This process's name in the leases it takes (host, pid, a random part).
    pub fn replica(&self) -> &str {
        self.inner.replica.get_or_init(crate::turn_lease::holder)
    }

    /// Leases and the gateway inbox shared by replicas on one database
    /// (`None` on state.db, where one gateway runs per home).
    pub fn shared(&self) -> Option<crate::stores::Shared> {
        self.opened_store()
            .as_ref()
            .ok()
            .and_then(|o| o.shared.clone())
    }

    /// Cron jobs and outputs, pairing files: the database's when replicas
    /// share one, else the files under the home. An error when the
    /// configured database could not be opened.
    pub fn documents(&self) -> Result<Arc<dyn hermes_state::documents::Documents>, String> {
        match self.shared() {
            Some(shared) => Ok(shared.documents),
            None => match self.required_store_error() {
                Some(e) => Err(e),
                None => Ok(Arc::new(hermes_state::documents::HomeDocuments::new(
                    self.inner.setup.home.root(),
                ))),
            },
        }
    }

    /// The API server's stored responses: the database's when replicas
    /// share one, else `response_store.db` under the home.
    pub fn responses(&self) -> Arc<dyn hermes_state::responses::ResponseStore> {
        match self.shared() {
            Some(shared) => shared.responses,
            None => crate::stores::local_responses(&self.inner.setup),
        }
    }

    /// Why there is no store, when there is none.
    pub fn store_problem(&self) -> Option<String> {
        self.opened_store()
            .as_ref()
            .err()
            .map(|e| format!("session history is off: {e}"))
    }

    /// Why the configured store cannot be used, when it must be (a
    /// PostgreSQL database, unlike state.db, never turns history off
    /// quietly): the caller stops with this error.
    pub fn required_store_error(&self) -> Option<String> {
        if !crate::stores::required(&self.inner.setup) {
            return None;
        }
        self.opened_store().as_ref().err().cloned()
    }

    /// Seeds the bundled skills into the home once per process (a gateway
    /// starts many sessions); returns why that failed, if it did.
    pub fn bundled_skills_synced(&self) -> Option<String> {
        self.inner
            .bundled_skills
            .get_or_init(|| crate::bundled_skills::sync(&self.inner.setup.home).err())
            .clone()
    }

    /// The installed skills as (name, description) for system prompts. A
    /// server starting many sessions reads the skills directory at most once
    /// per [`SKILLS_INDEX_FRESH`]; a skill created meanwhile shows up after that.
    pub fn skills_index(&self) -> Vec<(String, String)> {
        let mut cached = self
            .inner
            .skills_index
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((read_at, index)) = cached.as_ref()
            && read_at.elapsed() < SKILLS_INDEX_FRESH
        {
            return index.clone();
        }
        let index = crate::prompt::discover_skills(&self.inner.setup.home);
        *cached = Some((std::time::Instant::now(), index.clone()));
        index
    }

    /// The MCP hub, started (connections under way) on first use; `None`
    /// when no server is configured. Must be called inside the runtime.
    pub fn mcp(&self) -> Option<hermes_mcp::McpHub> {
        let mut slot = self
            .inner
            .mcp
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        slot.get_or_insert_with(|| crate::mcp::start(&self.inner.setup, self.mcp_oauth_prompt()))
            .clone()
    }

    /// Re-reads `mcp_servers:` from config.yaml and applies it (`/reload-mcp`);
    /// returns the servers now configured.
    pub fn reload_mcp(&self) -> Result<Vec<String>, SessionError> {
        let setup = &self.inner.setup;
        let config = hermes_state::Config::load(&setup.home.config_file(), &setup.env)
            .map_err(|e| SessionError::Setup(e.to_string()))?;
        let fresh = hermes_mcp::McpConfig::from_tree(&config.raw, &|name| {
            setup.env.get(name).map(str::to_owned)
        });
        let mut slot = self
            .inner
            .mcp
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match slot.as_ref().and_then(Option::as_ref) {
            Some(hub) => {
                hub.reload(&fresh);
                Ok(hub.server_names())
            }
            None => {
                // Nothing was running: start afresh from the new section.
                let mut reloaded = setup.clone();
                reloaded.config = config;
                let hub = crate::mcp::start(&reloaded, self.mcp_oauth_prompt());
                let names = hub.as_ref().map(|h| h.server_names()).unwrap_or_default();
                *slot = Some(hub);
                Ok(names)
            }
        }
    }

    /// Adds MCP servers that a client brought for its sessions (an editor's
    /// `mcpServers`), entries shaped like `mcp_servers:` in config.yaml; they
    /// join the configured ones for the rest of the process. Returns the
    /// problems of entries that could not be read.
    pub fn add_mcp_servers(
        &self,
        entries: serde_json::Map<String, serde_json::Value>,
    ) -> Vec<String> {
        if entries.is_empty() {
            return Vec::new();
        }
        let setup = &self.inner.setup;
        let mut extra = self
            .inner
            .extra_mcp
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        extra.extend(entries);
        let mut tree = setup.config.raw.clone();
        if !tree.is_object() {
            tree = serde_json::json!({});
        }
        let mut servers = tree
            .get("mcp_servers")
            .and_then(serde_json::Value::as_object)
            .cloned()
            .unwrap_or_default();
        servers.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        if let Some(obj) = tree.as_object_mut() {
            obj.insert("mcp_servers".into(), serde_json::Value::Object(servers));
        }
        drop(extra);
        let fresh =
            hermes_mcp::McpConfig::from_tree(&tree, &|name| setup.env.get(name).map(str::to_owned));
        let problems = fresh.problems.clone();
        let mut slot = self
            .inner
            .mcp
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match slot.as_ref().and_then(Option::as_ref) {
            Some(hub) => hub.reload(&fresh),
            None => {
                *slot = Some(Some(hermes_mcp::McpHub::start(
                    &fresh,
                    crate::mcp::hub_options(setup),
                )));
            }
        }
        problems
    }

    /// The process's HTTP client (built on first use).
    /// The process's shared HTTP client (one connection pool for every session).
    pub fn http(&self) -> Result<SharedHttp, LlmError> {
        self.inner
            .http
            .get_or_init(|| SharedHttp::new(CONNECT_TIMEOUT).map_err(|e| e.to_string()))
            .clone()
            .map_err(LlmError::Config)
    }

    /// The provider for a remote endpoint, shared by every session using it;
    /// keys come from the credential pool in `auth.json` when it holds any.
    pub fn remote(&self, ep: &Endpoint) -> Result<Arc<dyn Provider>, SessionError> {
        let config = &self.inner.setup.config;
        let key = format!(
            "{}|{}|{:?}|{}|{:?}",
            ep.provider,
            ep.base_url,
            ep.api_mode,
            ep.api_key.as_deref().unwrap_or(""),
            endpoint::envelope_cache(ep, config),
        );
        self.cached(key, || self.build_remote(ep))
    }

    /// The provider cached under `key`, built by `build` on first use (under the
    /// lock, so concurrent sessions never build the same endpoint twice).
    fn cached(
        &self,
        key: String,
        build: impl FnOnce() -> Result<Arc<dyn Provider>, SessionError>,
    ) -> Result<Arc<dyn Provider>, SessionError> {
        let mut cache = self
            .inner
            .providers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = cache.get(&key) {
            return Ok(found.clone());
        }
        let built = build()?;
        cache.insert(key, built.clone());
        Ok(built)
    }

    fn build_remote(&self, ep: &Endpoint) -> Result<Arc<dyn Provider>, SessionError> {
        let setup = &self.inner.setup;
        let auth = setup.home.root().join("auth.json");
        if auth.is_file() {
            let strategy = setup
                .config
                .sections
                .credential_pool_strategies
                .get(&ep.provider)
                .and_then(serde_json::Value::as_str);
            let pool = CredentialPool::load(
                &auth,
                &ep.provider,
                Strategy::resolve(strategy),
                Arc::new(SystemClock),
            )
            .map_err(|e| SessionError::Provider(format!("{}: {e}", auth.display())))?;
            if pool.has_credentials() {
                let template = ep.clone();
                let services = self.clone();
                let build: BuildWithKey = Box::new(move |key| {
                    let keyed = Endpoint {
                        api_key: Some(key.to_owned()),
                        ..template.clone()
                    };
                    services
                        .transport(&keyed)
                        .map_err(|e| LlmError::Config(e.to_string()))
                });
                if let Some(pooled) = PooledProvider::new(ep.provider.clone(), pool, build)? {
                    return Ok(Arc::new(pooled));
                }
            }
        }
        self.transport(ep)
    }

    /// The transport for `ep`'s wire protocol.
    fn transport(&self, ep: &Endpoint) -> Result<Arc<dyn Provider>, SessionError> {
        let setup = &self.inner.setup;
        let (config, env) = (&setup.config, &setup.env);
        let http = Some(self.http()?);
        let limits = crate::timeouts::resolve(ep, config, env);
        let provider: Arc<dyn Provider> = match ep.api_mode {
            ApiMode::ChatCompletions => Arc::new(ChatCompletionsProvider::new(
                ep.provider.clone(),
                ChatCompletionsConfig {
                    api_key: ep.api_key.clone(),
                    prompt_cache: endpoint::envelope_cache(ep, config),
                    http,
                    idle_timeout: limits.read,
                    request_timeout: limits.request,
                    ..ChatCompletionsConfig::new(ep.base_url.clone())
                },
            )?),
            ApiMode::AnthropicMessages => {
                let cfg = hermes_llm::AnthropicConfig {
                    reasoning_effort: config.sections.reasoning_effort.clone(),
                    cache_ttl: endpoint::cache_ttl(config),
                    http,
                    idle_timeout: limits.read,
                    request_timeout: limits.request,
                    ..hermes_llm::AnthropicConfig::new(
                        ep.base_url.clone(),
                        ep.api_key.clone().unwrap_or_default(),
                    )
                };
                Arc::new(hermes_llm::AnthropicProvider::new(
                    ep.provider.clone(),
                    cfg,
                )?)
            }
            ApiMode::CodexResponses => Arc::new(hermes_llm::ResponsesProvider::new(
                ep.provider.clone(),
                hermes_llm::ResponsesConfig {
                    api_key: ep.api_key.clone(),
                    http,
                    idle_timeout: limits.read,
                    request_timeout: limits.request,
                    ..hermes_llm::ResponsesConfig::new(ep.base_url.clone())
                },
            )?),
            ApiMode::BedrockConverse => {
                let auth =
                    endpoint::bedrock_auth(env).ok_or_else(|| SetupError::NoAwsCredentials {
                        home: env.get("HERMES_HOME").unwrap_or("$HERMES_HOME").to_owned(),
                    })?;
                // The region in the signature must be the endpoint's; a proxy or
                // custom endpoint falls back to the configured one.
                let region = hermes_llm::bedrock::region_from_endpoint(&ep.base_url)
                    .unwrap_or_else(|| endpoint::bedrock_region(config, env));
                let cfg = hermes_llm::BedrockConfig {
                    http,
                    idle_timeout: limits.read,
                    request_timeout: limits.request,
                    ..hermes_llm::BedrockConfig::new(ep.base_url.clone(), region, auth)
                };
                Arc::new(hermes_llm::BedrockProvider::new(ep.provider.clone(), cfg)?)
            }
        };
        Ok(provider)
    }

    /// The embedded model at `path` (loaded once per process), or the default
    /// GGUF in `$HERMES_HOME/models` when `path` is `None`. Returns the provider
    /// and the model's path as its name.
    pub fn local(&self, path: Option<&str>) -> Result<(Arc<dyn Provider>, String), SessionError> {
        let path = self.local_path(path);
        let name = path.display().to_string();
        let provider = self.cached(format!("local|{name}"), || self.start_local(&path))?;
        Ok((provider, name))
    }

    fn local_path(&self, path: Option<&str>) -> PathBuf {
        let models = self.inner.setup.home.models_dir();
        match path {
            // A name `hermes model pull` knows stands for its file.
            #[cfg(feature = "local")]
            Some(p) if !p.contains('/') && hermes_local::models::find(p).is_some() => {
                hermes_local::models::find(p)
                    .map_or_else(|| PathBuf::from(p), |m| models.join(m.file))
            }
            Some(p) => PathBuf::from(p),
            None => models.join(crate::DEFAULT_LOCAL_FILE),
        }
    }

    #[cfg(feature = "local")]
    fn start_local(&self, path: &std::path::Path) -> Result<Arc<dyn Provider>, SessionError> {
        let setup = &self.inner.setup;
        let section = &setup.config.sections.local;
        let mut local = hermes_local::LocalConfig::new(path);
        if let Some(n) = setup
            .config
            .model
            .context_length
            .and_then(|n| u32::try_from(n).ok())
        {
            local.context_length = n;
        }
        if let Some(t) = hermes_state::settings::lenient::count(section.threads) {
            local.threads = usize::try_from(t).unwrap_or(1).max(1);
        }
        // `local.prompt_cache: false` keeps nothing between runs.
        if section.prompt_cache != Some(false) {
            local.prompt_cache = Some(setup.home.cache_dir().join("local_prompt"));
        }
        let provider = hermes_local::LocalProvider::start(local)
            .map_err(|e| SessionError::Provider(e.to_string()))?;
        Ok(Arc::new(provider))
    }

    #[cfg(not(feature = "local"))]
    fn start_local(&self, _path: &std::path::Path) -> Result<Arc<dyn Provider>, SessionError> {
        Err(SessionError::Provider(
            "this hermes was built without the embedded model (cargo feature `local`): configure a remote provider instead".into(),
        ))
    }

    /// Whether the default embedded model has been fetched (and can run in this build).
    pub fn local_model_available(&self) -> bool {
        cfg!(feature = "local") && self.local_path(None).is_file()
    }
}

/// The web tools' process-wide parts.
#[derive(Debug)]
pub struct WebShared {
    /// `web:` settings and keys.
    pub settings: Arc<hermes_web::WebSettings>,
    /// The client pages are fetched with (redirects checked by hand).
    pub fetcher: hermes_web::extract::fetch::Fetcher,
    /// How to run Chromium, when one is installed.
    pub browser: Option<hermes_web::browser::BrowserSettings>,
}

/// What the local browser may reach: private and loopback pages, as in the
/// reference's local mode (they are much of what a local browser is for),
/// unless `allow_private_urls: false` is set explicitly; metadata never.
fn browser_policy(config: &hermes_state::Config) -> hermes_tools::url_safety::UrlPolicy {
    let s = &config.sections;
    hermes_tools::url_safety::UrlPolicy {
        allow_private: s.security.allow_private_urls != Some(false)
            && s.browser.allow_private_urls != Some(false),
    }
}

impl WebShared {
    fn new(setup: &Setup) -> Self {
        let config = &setup.config.raw;
        let settings = hermes_web::WebSettings::read(
            config,
            &|name| setup.env.get(name).map(str::to_owned),
            hermes_tools::url_safety::UrlPolicy::from_config(&setup.config),
            setup.home.root(),
        );
        let executable = hermes_web::browser::cdp::find_chromium(
            setup.env.get("AGENT_BROWSER_EXECUTABLE_PATH").or_else(|| {
                config
                    .pointer("/browser/executable")
                    .and_then(serde_json::Value::as_str)
            }),
            setup.env.get("PATH"),
        );
        let idle = config
            .pointer("/browser/inactivity_timeout")
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(120.0)
            .max(30.0);
        let browser = executable.map(|executable| hermes_web::browser::BrowserSettings {
            executable,
            headed: config
                .pointer("/browser/headed")
                .and_then(serde_json::Value::as_bool)
                == Some(true),
            inactivity: std::time::Duration::from_secs_f64(idle),
            cache_dir: setup.home.root().join("cache"),
            policy: browser_policy(&setup.config),
        });
        Self {
            settings: Arc::new(settings),
            fetcher: hermes_web::extract::fetch::Fetcher::default(),
            browser,
        }
    }
}
