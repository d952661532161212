//! Assembling an [`Agent`]: everything it is configured with is given here,
//! once, before its first turn.

use std::sync::Arc;

use hermes_llm::Provider;
use hermes_protocol::{Message, Role};
use hermes_tools::Registry;
use hermes_tools::approval::ApprovalGate;

use super::{Agent, AgentOptions};
use crate::compress::{CompressorConfig, ContextCompressor};
use crate::guardrails::{GuardrailConfig, Guardrails};
use crate::recovery::RetryPolicy;
use crate::resilience::Route;
use crate::steer::SteerHandle;
use crate::store::{LimitStore, MessageStore};
use crate::timing::{SystemTiming, Timing};

/// Builds an [`Agent`]; every setting has the reference's default.
pub struct AgentBuilder {
    primary: Route,
    tools: Registry,
    options: AgentOptions,
    system_prompt: Option<String>,
    history: Vec<Message>,
    fallbacks: Vec<Route>,
    retry: RetryPolicy,
    approvals: Arc<ApprovalGate>,
    clarifier: Option<Arc<dyn hermes_tools::Clarifier>>,
    guardrails: GuardrailConfig,
    compression: CompressorConfig,
    auxiliary: Option<Route>,
    context_length: Option<u64>,
    limits: Option<Box<dyn LimitStore>>,
    store: Option<Box<dyn MessageStore>>,
    steer: SteerHandle,
    timing: Arc<dyn Timing>,
    hidden_env: Arc<[String]>,
    strict_store: bool,
    environment: Option<Arc<dyn hermes_env::Environment>>,
    dynamic: Option<Arc<dyn hermes_tools::DynamicTools>>,
    processes: Option<Arc<hermes_tools::processes::ProcessTable>>,
    checkpoints: Option<Arc<hermes_tools::checkpoints::Checkpoints>>,
    hooks: Arc<hermes_tools::hooks::Hooks>,
    memory_provider: Option<Arc<dyn hermes_tools::memory_provider::MemoryProvider>>,
    context_engine: Option<Arc<dyn crate::compress::engine::ContextEngine>>,
    platform: String,
    client_files: Option<Arc<dyn hermes_tools::ClientFiles>>,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("primary", &self.primary)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    /// An agent talking to `provider` (model `options.model`) with `tools`.
    pub fn new(provider: Arc<dyn Provider>, tools: Registry, options: AgentOptions) -> Self {
        Self {
            primary: Route {
                provider,
                model: options.model.clone(),
            },
            tools,
            options,
            system_prompt: None,
            history: Vec::new(),
            fallbacks: Vec::new(),
            retry: RetryPolicy::default(),
            approvals: Arc::default(),
            clarifier: None,
            guardrails: GuardrailConfig::default(),
            compression: CompressorConfig::default(),
            auxiliary: None,
            context_length: None,
            limits: None,
            store: None,
            steer: SteerHandle::default(),
            timing: Arc::new(SystemTiming),
            hidden_env: Arc::from(Vec::new()),
            strict_store: false,
            environment: None,
            processes: None,
            checkpoints: None,
            dynamic: None,
            hooks: Arc::default(),
            memory_provider: None,
            context_engine: None,
            platform: "cli".into(),
            client_files: None,
        }
    }

    /// The system prompt (blank means none).
    pub fn system_prompt(mut self, prompt: Option<String>) -> Self {
        self.system_prompt = prompt;
        self
    }

    /// An earlier conversation to continue (system messages in it are ignored).
    pub fn history(mut self, history: Vec<Message>) -> Self {
        self.history = history;
        self
    }

    /// A provider to fall back to, after the primary and earlier fallbacks.
    pub fn fallback(mut self, provider: Arc<dyn Provider>, model: impl Into<String>) -> Self {
        self.fallbacks.push(Route {
            provider,
            model: model.into(),
        });
        self
    }

    /// How failed calls are retried.
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The dangerous-command policy (refuse-by-default if unset).
    pub fn approvals(mut self, gate: Arc<ApprovalGate>) -> Self {
        self.approvals = gate;
        self
    }

    /// Who answers the `clarify` tool.
    pub fn clarifier(mut self, clarifier: Option<Arc<dyn hermes_tools::Clarifier>>) -> Self {
        self.clarifier = clarifier;
        self
    }

    /// The `tool_loop_guardrails:` thresholds.
    pub fn guardrails(mut self, config: GuardrailConfig) -> Self {
        self.guardrails = config;
        self
    }

    /// The `compression:` settings.
    pub fn compression(mut self, config: CompressorConfig) -> Self {
        self.compression = config;
        self
    }

    /// The model that writes compression summaries (`auxiliary.compression`).
    pub fn auxiliary(mut self, provider: Arc<dyn Provider>, model: impl Into<String>) -> Self {
        self.auxiliary = Some(Route {
            provider,
            model: model.into(),
        });
        self
    }

    /// The model's context window (config `model.context_length` or a cached limit).
    pub fn context_length(mut self, tokens: Option<u64>) -> Self {
        self.context_length = tokens;
        self
    }

    /// Where windows that providers confirm are remembered for later sessions.
    pub fn limit_store(mut self, store: Box<dyn LimitStore>) -> Self {
        self.limits = Some(store);
        self
    }

    /// Persists every message and usage record through `store`.
    pub fn store(mut self, store: Box<dyn MessageStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The slot mid-turn steering text goes into (shared with the front-end).
    pub fn steer(mut self, steer: SteerHandle) -> Self {
        self.steer = steer;
        self
    }

    /// Clock, sleep and jitter (tests inject fixed ones).
    pub fn timing(mut self, timing: Arc<dyn Timing>) -> Self {
        self.timing = timing;
        self
    }

    /// Where the tools' background processes are kept (a fresh table by default).
    pub fn processes(mut self, table: Arc<hermes_tools::processes::ProcessTable>) -> Self {
        self.processes = Some(table);
        self
    }

    /// Takes checkpoints of project trees before file-changing tools run.
    pub fn checkpoints(mut self, checkpoints: Arc<hermes_tools::checkpoints::Checkpoints>) -> Self {
        self.checkpoints = Some(checkpoints);
        self
    }

    /// Makes a failed store write end the turn with an error (a store that
    /// other processes share) instead of a status line.
    pub fn strict_store(mut self, strict: bool) -> Self {
        self.strict_store = strict;
        self
    }

    /// Environment variables (credentials) the processes tools start never inherit.
    pub fn hidden_env(mut self, names: impl Into<Arc<[String]>>) -> Self {
        self.hidden_env = names.into();
        self
    }

    /// Where commands and file tools run (`terminal.backend`; the host by default).
    pub fn environment(mut self, environment: Arc<dyn hermes_env::Environment>) -> Self {
        self.environment = Some(environment);
        self
    }

    /// Lifecycle hooks (shell hooks, plugins) run around turns, model calls and tools.
    pub fn hooks(mut self, hooks: Arc<hermes_tools::hooks::Hooks>) -> Self {
        self.hooks = hooks;
        self
    }

    /// The external memory provider: recall before each turn, each finished turn kept.
    pub fn memory_provider(
        mut self,
        provider: Option<Arc<dyn hermes_tools::memory_provider::MemoryProvider>>,
    ) -> Self {
        self.memory_provider = provider;
        self
    }

    /// An engine that compresses instead of the built-in compressor.
    pub fn context_engine(
        mut self,
        engine: Option<Arc<dyn crate::compress::engine::ContextEngine>>,
    ) -> Self {
        self.context_engine = engine;
        self
    }

    /// An editor's files, which `read_file` and `write_file` go through.
    pub fn client_files(mut self, files: Option<Arc<dyn hermes_tools::ClientFiles>>) -> Self {
        self.client_files = files;
        self
    }

    /// The platform hooks are told the session runs on (`cli`, `acp`, `telegram` …).
    pub fn platform(mut self, platform: impl Into<String>) -> Self {
        self.platform = platform.into();
        self
    }

    /// Tools that come and go while the session runs (MCP servers).
    pub fn dynamic_tools(mut self, source: Option<Arc<dyn hermes_tools::DynamicTools>>) -> Self {
        self.dynamic = source;
        self
    }

    /// The agent.
    pub fn build(self) -> Agent {
        let mut messages = Vec::with_capacity(self.history.len() + 1);
        if let Some(prompt) = self.system_prompt.filter(|p| !p.trim().is_empty()) {
            messages.push(Message::system(prompt));
        }
        messages.extend(self.history.into_iter().filter(|m| m.role != Role::System));
        let window = self
            .context_length
            .unwrap_or(hermes_llm::context_limits::DEFAULT_CONTEXT_LENGTH)
            .max(1);
        let compressor = ContextCompressor::new(self.compression, window, self.options.max_tokens);
        let mut routes = vec![self.primary];
        routes.extend(self.fallbacks);
        Agent {
            routes,
            active: 0,
            retry: self.retry,
            tools: self.tools,
            options: self.options,
            messages,
            scaffolding: Vec::new(),
            store: self.store.map(std::sync::Mutex::new),
            compressor,
            confirmed_limit: None,
            output_cap: None,
            limits: self.limits.map(std::sync::Mutex::new),
            auxiliary: self.auxiliary,
            auxiliary_failed: None,
            guardrails: Guardrails::new(self.guardrails),
            approvals: self.approvals,
            steer: self.steer,
            clarifier: self.clarifier,
            timing: self.timing,
            hidden_env: self.hidden_env,
            strict_store: self.strict_store,
            store_failure: None,
            environment: self.environment.unwrap_or_else(hermes_env::local),
            processes: self.processes.unwrap_or_default(),
            checkpoints: self.checkpoints,
            dynamic: self.dynamic.map(super::dynamic::DynamicState::new),
            schema_tokens: None,
            hooks: self.hooks,
            platform: self.platform,
            turn_context: None,
            client_files: self.client_files,
            memory_provider: self.memory_provider,
            memory_sync: None,
            context_engine: self.context_engine,
        }
    }
}
