//! Session assembly, the composition root: a [`SessionSpec`] plus the shared
//! [`Services`] become a configured [`Agent`] with its tools, prompt, store,
//! approval gate and fallbacks — one named step each.

mod conversation;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use hermes_agent::compress::CompressorConfig;
use hermes_agent::{Agent, AgentOptions, EventSink, GuardrailConfig, RetryPolicy};
use hermes_llm::Provider;
use hermes_protocol::Event;
use hermes_state::context_cache::ContextLengthCache;
use hermes_state::memory::{MemorySettings, MemoryStore};
use hermes_tools::approval::{ApprovalGate, Presence};
use hermes_tools::builtin::memory::MemoryTool;
use hermes_tools::memory_provider::MemoryProvider;
use hermes_tools::{Clarifier, DynamicTools, Homes, Registry};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::endpoint::{self, Endpoint, SetupError};
use crate::environment::Prepared as Place;
use crate::error::SessionError;
use crate::questions::{self, EventApprover, EventClarifier, Questions};
use crate::services::Services;
use crate::spec::{Notice, SessionSpec};
use crate::store::{CachedLimits, SessionRecorder, SessionStore};
use conversation::Opened;
pub(crate) use tools::register_home_assistant;

/// A session ready to run.
pub(crate) struct Assembled {
    pub(crate) agent: Agent,
    pub(crate) endpoint: Endpoint,
    pub(crate) memory_tool: Option<MemoryTool>,
    pub(crate) toolsets: Vec<String>,
    /// Text to put in front of the first user message (`-s` skills).
    pub(crate) preload: Option<String>,
    pub(crate) notices: Vec<Notice>,
    pub(crate) gate: Arc<ApprovalGate>,
    pub(crate) questions: Arc<Questions>,
    pub(crate) events: (EventSink, UnboundedReceiver<Event>),
    pub(crate) store: Option<Arc<dyn SessionStore>>,
    pub(crate) titler: Option<crate::title::Titler>,
}

/// Builds a session as `spec` and the configuration ask.
pub(crate) async fn assemble(
    services: &Services,
    spec: &SessionSpec,
) -> Result<Assembled, SessionError> {
    let mut notices = Vec::new();
    let preload = preload(services, spec, &mut notices)?;
    let place = crate::environment::prepare(services.setup(), &spec.cwd).await?;
    let route = endpoint_step(services, spec, &mut notices).await?;
    let memory = memory_step(services, spec, &mut notices).await;
    let tools = tools_step(services, spec, &route, &memory, &mut notices).await;
    let store = services.store();
    let prompt = |notices: &mut Vec<Notice>| {
        prompt_step(
            services,
            spec,
            &route,
            &memory,
            &tools.registry,
            &place,
            notices,
        )
    };
    let opened = conversation::open(
        services,
        spec,
        store.as_ref(),
        &route,
        &prompt,
        &mut notices,
    )?;
    let gate = gate_step(services, spec);
    let titler = titler(
        services,
        spec,
        (&route.provider, &route.endpoint),
        store.as_ref(),
        &mut notices,
    );
    let agent = agent_step(
        services,
        spec,
        AgentParts {
            route: &route,
            tools: tools.registry,
            dynamic: tools.dynamic,
            opened,
            gate: &gate,
            place: &place,
            store: store.as_ref(),
            memory_provider: memory.provider.clone(),
        },
        &mut notices,
    );
    Ok(Assembled {
        agent,
        endpoint: route.endpoint,
        memory_tool: memory.tool,
        toolsets: tools.toolsets,
        preload,
        notices,
        gate: gate.gate,
        questions: gate.questions,
        events: gate.events,
        store,
        titler,
    })
}

/// Where the session's model answers: the primary provider and endpoint, the
/// fallbacks in order, and how calls are retried.
pub(crate) struct Route {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) endpoint: Endpoint,
    pub(crate) fallbacks: Vec<(Arc<dyn Provider>, String)>,
    pub(crate) retry: RetryPolicy,
}

impl Route {
    /// The model the session talks to.
    pub(crate) fn model(&self) -> String {
        self.endpoint.model.clone().unwrap_or_default()
    }
}

/// Step "endpoint": the primary, its fallbacks and the retry policy.
async fn endpoint_step(
    services: &Services,
    spec: &SessionSpec,
    notices: &mut Vec<Notice>,
) -> Result<Route, SessionError> {
    let setup = services.setup();
    let (config, home) = (&setup.config, &setup.home);
    let (provider, endpoint) = primary(services, spec, notices).await?;
    let mut fallbacks = Vec::new();
    for fb in endpoint::fallbacks(config, &setup.env)
        .map_err(|e| SessionError::Setup(format!("{}: {e}", home.config_file().display())))?
    {
        fallbacks.push((services.remote(&fb)?, fb.model.unwrap_or_default()));
    }
    // The reference's `api_max_retries` counts attempts, the first included.
    let retry = RetryPolicy {
        max_retries: config.agent.api_max_retries.saturating_sub(1),
        max_total_wait: Duration::from_secs(config.agent.api_retry_max_wait_seconds),
        ..RetryPolicy::default()
    };
    Ok(Route {
        provider,
        endpoint,
        fallbacks,
        retry,
    })
}

/// The session's persistent memory (MEMORY.md / USER.md), when it has one.
struct Memory {
    settings: MemorySettings,
    store: Option<MemoryStore>,
    tool: Option<MemoryTool>,
    /// The external provider `memory.provider` names.
    provider: Option<Arc<dyn MemoryProvider>>,
}

/// Step "memory": `--ignore-rules` skips memory entirely, as the reference's
/// skip_memory does.
async fn memory_step(services: &Services, spec: &SessionSpec, notices: &mut Vec<Notice>) -> Memory {
    let setup = services.setup();
    let settings = MemorySettings::from_config(&setup.config);
    let store = (!spec.ignore_rules && settings.any_enabled())
        .then(|| MemoryStore::for_home(&setup.home, settings.limits));
    // Cron jobs and --ignore-rules runs leave the provider alone, as the
    // reference's skip_memory and cron context do.
    let provider = if spec.ignore_rules || spec.source == "cron" {
        None
    } else {
        crate::memory_providers::open(services, spec, notices).await
    };
    let mut tool = store.clone().map(MemoryTool::new);
    if let (Some(tool), Some(provider)) = (tool.as_mut(), &provider) {
        tool.mirror_to(provider.clone());
    }
    Memory {
        settings,
        store,
        tool,
        provider,
    }
}

/// What the session offers the model.
struct Tools {
    toolsets: Vec<String>,
    registry: Registry,
    /// The MCP servers' tools, which arrive as the servers connect.
    dynamic: Option<Arc<dyn DynamicTools>>,
}

/// Step "tools": the registry cut to the session's toolsets; MCP servers are
/// named in the toolset list (or `no_mcp`), not in the built-in registry.
async fn tools_step(
    services: &Services,
    spec: &SessionSpec,
    route: &Route,
    memory: &Memory,
    notices: &mut Vec<Notice>,
) -> Tools {
    let setup = services.setup();
    let toolsets = spec
        .toolsets
        .clone()
        .unwrap_or_else(|| setup.config.toolsets_for(&spec.source));
    let sampler = Arc::new(crate::mcp::ModelSampler {
        provider: route.provider.clone(),
        model: route.model(),
    });
    let (dynamic, builtin_toolsets) =
        crate::mcp::session_tools(setup, services.mcp().as_ref(), &toolsets, sampler);
    let extra = tools::plugin_tools(services, notices).await;
    let (registry, unknown) = tools::registry(
        services,
        (&route.provider, &route.endpoint),
        &route.fallbacks,
        route.retry.clone(),
        memory.tool.as_ref(),
        &builtin_toolsets,
        spec.source != "cron",
        extra,
    );
    let mut registry = registry;
    if let Some(provider) = &memory.provider {
        for tool in provider.clone().tools() {
            registry.register(tool);
        }
    }
    if !unknown.is_empty() {
        // As the reference: named, and the session starts without them.
        notices.push(Notice::Warning(format!(
            "Unknown toolsets: {} (ignored; `hermes tools list` shows the known ones)",
            unknown.join(", ")
        )));
    }
    Tools {
        toolsets,
        registry,
        dynamic,
    }
}

/// Step "prompt": a new session's system prompt (a resumed one keeps its
/// stored prompt, so the provider's prompt cache still matches).
fn prompt_step(
    services: &Services,
    spec: &SessionSpec,
    route: &Route,
    memory: &Memory,
    tools: &Registry,
    place: &Place,
    notices: &mut Vec<Notice>,
) -> String {
    let setup = services.setup();
    let builtin_block = memory.store.as_ref().and_then(|store| {
        let snapshot = hermes_tools::builtin::memory::session_snapshot(
            store,
            memory.settings.memory_enabled,
            memory.settings.user_profile_enabled,
        );
        // An unreadable store costs the session its memory, not its start.
        snapshot.unwrap_or_else(|e| {
            notices.push(Notice::Warning(format!(
                "memory is off for this session: {e}"
            )));
            None
        })
    });
    let provider_block = memory
        .provider
        .as_ref()
        .map(|p| p.system_prompt_block())
        .filter(|b| !b.trim().is_empty());
    let memory_block = match (builtin_block, provider_block) {
        (Some(a), Some(b)) => Some(format!("{a}\n\n{b}")),
        (a, b) => a.or(b),
    };
    let (text, warnings) = crate::prompt::build_system_prompt(crate::prompt::PromptContext {
        home: &setup.home,
        env: &setup.env,
        cwd: &spec.cwd,
        model: &route.model(),
        provider: &route.endpoint.provider,
        tools: tools.names().map(str::to_owned).collect(),
        ignore_rules: spec.ignore_rules,
        memory_block,
        platform: &spec.source,
        skills_problem: services.bundled_skills_synced(),
        skills_index: if tools.get("skill_view").is_some() {
            services.skills_index()
        } else {
            Vec::new()
        },
    });
    notices.extend(warnings.into_iter().map(Notice::Warning));
    match &place.hint {
        Some(hint) => format!("{text}\n\n{hint}"),
        None => text,
    }
}

/// How the session asks its person: the event stream front-ends read, the
/// pending questions, the approval gate and the clarifier.
struct Gate {
    events: (EventSink, UnboundedReceiver<Event>),
    questions: Arc<Questions>,
    gate: Arc<ApprovalGate>,
    clarifier: Option<Arc<dyn Clarifier>>,
}

/// Step "gate": interactive sessions ask through events; others decide by
/// the approval rules alone.
fn gate_step(services: &Services, spec: &SessionSpec) -> Gate {
    let setup = services.setup();
    let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
    let questions = Arc::new(Questions::default());
    let presence = if spec.interactive {
        Presence::Interactive(Arc::new(EventApprover {
            questions: questions.clone(),
            events: events_tx.clone(),
        }))
    } else {
        Presence::NonInteractive
    };
    let gate = questions::approval_gate(&setup.config, &setup.home, spec.yolo, presence);
    let clarifier = spec.interactive.then(|| {
        Arc::new(EventClarifier {
            questions: questions.clone(),
            events: events_tx.clone(),
            timeout: questions::clarify_timeout(&setup.config),
        }) as Arc<dyn Clarifier>
    });
    Gate {
        events: (events_tx, events_rx),
        questions,
        gate,
        clarifier,
    }
}

/// What the agent is built from, gathered by the steps before.
struct AgentParts<'a> {
    route: &'a Route,
    tools: Registry,
    dynamic: Option<Arc<dyn DynamicTools>>,
    opened: Opened,
    gate: &'a Gate,
    place: &'a Place,
    store: Option<&'a Arc<dyn SessionStore>>,
    memory_provider: Option<Arc<dyn MemoryProvider>>,
}

/// Step "agent": the loop itself, configured from the parts.
fn agent_step(
    services: &Services,
    spec: &SessionSpec,
    parts: AgentParts<'_>,
    notices: &mut Vec<Notice>,
) -> Agent {
    let setup = services.setup();
    let (config, home) = (&setup.config, &setup.home);
    let AgentParts {
        route,
        tools,
        dynamic,
        opened,
        gate,
        place,
        store,
        memory_provider,
    } = parts;
    let model = route.model();
    let limits = ContextLengthCache::new(home.context_length_cache());
    let context_length = config
        .model
        .context_length
        .or_else(|| limits.get(&model, &route.endpoint.base_url));
    let options = agent_options(services, spec, &model, &opened.session_id, place);
    // A conversation that goes on hears when its background processes end.
    let processes = if spec.interactive {
        hermes_tools::processes::ProcessTable::announcing()
    } else {
        hermes_tools::processes::ProcessTable::default()
    };
    let mut builder = Agent::builder(route.provider.clone(), tools, options)
        .processes(Arc::new(processes))
        // `checkpoints.enabled` is for terminal sessions, as in the reference:
        // a server's sessions would each block on snapshots of shared trees.
        // Files on another machine or in a container are snapshotted there.
        .checkpoints(Arc::new(crate::checkpoints::checkpoints_in(
            setup,
            spec.checkpoints,
            spec.source == "cli",
            &place.env,
        )))
        .system_prompt(Some(with_ephemeral(&opened.system_prompt, spec)))
        .history(match &spec.seed {
            Some(seed) => seed.history.clone(),
            None => opened.history,
        })
        .approvals(gate.gate.clone())
        .clarifier(gate.clarifier.clone())
        .context_length(context_length)
        .limit_store(Box::new(CachedLimits::new(
            limits,
            route.endpoint.base_url.clone(),
        )))
        .compression(CompressorConfig::from_section(&config.sections.compression))
        .guardrails(GuardrailConfig::from_section(
            &config.sections.tool_loop_guardrails,
        ))
        .retry_policy(route.retry.clone())
        .dynamic_tools(dynamic)
        .hooks(if spec.hooks.0.is_empty() {
            services.hooks()
        } else {
            Arc::new(services.hooks().prepended(&spec.hooks.0))
        })
        .platform(spec.source.clone())
        .memory_provider(memory_provider)
        .context_engine(crate::context_engines::open(setup, notices))
        .client_files(spec.client_files.clone())
        .strict_store(services.shared().is_some())
        .hidden_env(crate::secrets::credential_vars(setup))
        .environment(place.env.clone());
    match crate::auxiliary::summarizer(services, &route.endpoint) {
        Ok(Some(aux)) => builder = builder.auxiliary(aux.provider, aux.model),
        Ok(None) => {}
        Err(e) => notices.push(Notice::Warning(format!(
            "auxiliary.compression is not usable ({e}); the main model will write compression summaries"
        ))),
    }
    for (remote, fallback_model) in &route.fallbacks {
        builder = builder.fallback(remote.clone(), fallback_model.clone());
    }
    if let Some(db) = store {
        builder = builder.store(Box::new(SessionRecorder::new(
            db.clone(),
            &opened.session_id,
            &model,
            &route.endpoint.provider,
            &route.endpoint.base_url,
        )));
    }
    builder.build()
}

/// The loop's own settings: model, turn limit, working directory, homes.
fn agent_options(
    services: &Services,
    spec: &SessionSpec,
    model: &str,
    session_id: &str,
    place: &Place,
) -> AgentOptions {
    let setup = services.setup();
    AgentOptions {
        model: model.to_owned(),
        max_turns: spec.max_turns.unwrap_or(setup.config.agent.max_turns),
        max_tokens: None,
        temperature: None,
        cwd: place.cwd.clone().unwrap_or_else(|| spec.cwd.clone()),
        session_id: session_id.to_owned(),
        homes: Homes {
            home: setup.env.get("HOME").map(Into::into),
            hermes_home: Some(setup.home.root().to_path_buf()),
        },
    }
}

/// What titles the session, when it is titled automatically: not with
/// `auxiliary.title_generation.enabled: false`, nor on the embedded model
/// alone (a title would compete with the user for its CPU).
fn titler(
    services: &Services,
    spec: &SessionSpec,
    (provider, endpoint): (&Arc<dyn Provider>, &Endpoint),
    store: Option<&Arc<dyn SessionStore>>,
    notices: &mut Vec<Notice>,
) -> Option<crate::title::Titler> {
    let config = &services.setup().config;
    let setting = |key: &str| config.get(&format!("auxiliary.title_generation.{key}"));
    let enabled = !matches!(setting("enabled"), Some(serde_json::Value::Bool(false)))
        && !setting("enabled")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|s| {
                matches!(
                    s.trim().to_ascii_lowercase().as_str(),
                    "false" | "no" | "off" | "0"
                )
            });
    let store = store.filter(|_| spec.auto_title && enabled)?;
    let main = hermes_agent::Route {
        provider: provider.clone(),
        model: endpoint.model.clone().unwrap_or_default(),
    };
    let route = match crate::auxiliary::titler(services, endpoint, &main) {
        Ok(route) => route,
        Err(e) => {
            notices.push(Notice::Warning(format!(
                "auxiliary.title_generation is not usable ({e}); sessions are not titled"
            )));
            return None;
        }
    };
    if endpoint.provider == "local" && Arc::ptr_eq(&route.provider, provider) {
        return None;
    }
    Some(crate::title::Titler {
        route,
        store: store.clone(),
        language: setting("language")
            .and_then(serde_json::Value::as_str)
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned),
        timeout: setting("timeout")
            .and_then(serde_json::Value::as_f64)
            .filter(|t| *t > 0.0)
            .map_or(
                crate::title::DEFAULT_TIMEOUT,
                std::time::Duration::from_secs_f64,
            ),
    })
}

/// The `-s` skills' text, which rides in front of the first user message (not
/// in the system prompt, so the prompt cache still matches).
fn preload(
    services: &Services,
    spec: &SessionSpec,
    notices: &mut Vec<Notice>,
) -> Result<Option<String>, SessionError> {
    if spec.skills.iter().all(|s| s.trim().is_empty()) {
        return Ok(None);
    }
    let (text, missing) = crate::skills::preload_text(&services.setup().home, &spec.skills)
        .map_err(SessionError::Spec)?;
    if !missing.is_empty() {
        notices.push(Notice::Warning(format!(
            "skipping unknown skill(s): {}",
            missing.join(", ")
        )));
    }
    Ok(Some(text))
}

/// The primary provider and its endpoint (the model filled in): the configured
/// one, or the embedded model when nothing is configured and it is installed.
async fn primary(
    services: &Services,
    spec: &SessionSpec,
    notices: &mut Vec<Notice>,
) -> Result<(Arc<dyn Provider>, Endpoint), SessionError> {
    let setup = services.setup();
    let mut ep = match setup.endpoint(spec.provider.as_deref(), spec.model.as_deref()) {
        Ok(ep) => ep,
        Err(SetupError::NoProvider { .. }) if services.local_model_available() => {
            notices.push(Notice::Info(
                "No provider configured: answering offline with the small local model \
                 (SmolLM2-135M). It manages short questions and chat, but it cannot use tools \
                 reliably and may make up facts or file listings. `hermes setup` configures a \
                 provider for real work."
                    .into(),
            ));
            Endpoint::local(None)
        }
        Err(e) => return Err(e.into()),
    };
    if ep.provider == "local" {
        let (provider, name) = services.local(ep.model.as_deref())?;
        ep.model = Some(name);
        return Ok((provider, ep));
    }
    let remote = services.remote(&ep)?;
    if ep.model.is_none() {
        ep.model = Some(discover_model(&remote, &ep).await?);
    }
    Ok((remote, ep))
}

/// The first model a server lists, for endpoints configured without one.
async fn discover_model(
    provider: &Arc<dyn Provider>,
    ep: &Endpoint,
) -> Result<String, SessionError> {
    match provider.list_models().await {
        Ok(models) if !models.is_empty() => Ok(models[0].clone()),
        Ok(_) => Err(SessionError::Provider(format!(
            "the server at {} lists no models: set model.default in config.yaml or pass -m MODEL",
            ep.base_url
        ))),
        Err(e) if e.kind_phrase() == Some("cannot connect") => {
            Err(SessionError::Provider(format!(
                "cannot reach the model server at {} ({}): start it, or point model.base_url at one that runs (`hermes doctor` checks the endpoint)",
                ep.base_url,
                hermes_llm::redact::redact_secrets(&e.summary())
            )))
        }
        Err(e) => Err(SessionError::Provider(format!(
            "no model configured and the server at {} could not list its models ({}): set model.default in config.yaml or pass -m MODEL",
            ep.base_url,
            hermes_llm::redact::redact_secrets(&e.to_string())
        ))),
    }
}

/// The session's prompt plus a seed's run-only system text.
fn with_ephemeral(prompt: &str, spec: &SessionSpec) -> String {
    match spec
        .seed
        .as_ref()
        .and_then(|s| s.ephemeral_prompt.as_deref())
        .filter(|e| !e.trim().is_empty())
    {
        Some(extra) => format!("{prompt}\n\n{extra}"),
        None => prompt.to_owned(),
    }
}
