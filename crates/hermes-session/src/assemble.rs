//! Session assembly, the composition root: a [`SessionSpec`] plus the shared
//! [`Services`] become a configured [`Agent`] with its tools, prompt, store,
//! approval gate and fallbacks.

use std::sync::Arc;
use std::time::Duration;

use hermes_agent::code_exec::{self, CodeExecSettings};
use hermes_agent::compress::CompressorConfig;
use hermes_agent::{Agent, AgentOptions, EventSink, GuardrailConfig, RetryPolicy};
use hermes_llm::Provider;
use hermes_protocol::Event;
use hermes_state::context_cache::ContextLengthCache;
use hermes_state::memory::{MemorySettings, MemoryStore};
use hermes_tools::approval::{ApprovalGate, Presence};
use hermes_tools::builtin::memory::MemoryTool;
use hermes_tools::builtin::session_search::SessionSearchTool;
use hermes_tools::{Clarifier, Homes, Registry};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::endpoint::{self, Endpoint, SetupError};
use crate::error::SessionError;
use crate::questions::{self, EventApprover, EventClarifier, Questions};
use crate::services::Services;
use crate::spec::{Notice, SessionSpec};
use crate::store::{self, CachedLimits, SessionRecorder, SessionStore};

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
    let setup = services.setup();
    let (config, env, home) = (&setup.config, &setup.env, &setup.home);
    let mut notices = Vec::new();
    let preload = preload(services, spec, &mut notices)?;
    let place = crate::environment::prepare(setup, &spec.cwd).await?;
    let cwd = place.cwd.clone().unwrap_or_else(|| spec.cwd.clone());
    let (provider, endpoint) = primary(services, spec, &mut notices).await?;
    let toolsets = spec
        .toolsets
        .clone()
        .unwrap_or_else(|| config.toolsets_for(&spec.source));
    let mut fallbacks = Vec::new();
    for fb in endpoint::fallbacks(config, env)
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
    // --ignore-rules skips memory entirely, as the reference's skip_memory does.
    let memory_settings = MemorySettings::from_config(config);
    let memory_store = (!spec.ignore_rules && memory_settings.any_enabled())
        .then(|| MemoryStore::for_home(home, memory_settings.limits));
    let memory_tool = memory_store.clone().map(MemoryTool::new);
    // MCP servers are named in the toolset list (or `no_mcp`), not in the
    // built-in registry; their tools arrive as the servers connect.
    let sampler = Arc::new(crate::mcp::ModelSampler {
        provider: provider.clone(),
        model: endpoint.model.clone().unwrap_or_default(),
    });
    let (mcp_tools, builtin_toolsets) =
        crate::mcp::session_tools(setup, services.mcp().as_ref(), &toolsets, sampler);
    let extra = plugin_tools(services, &mut notices).await;
    let (tools, unknown) = registry(
        services,
        (&provider, &endpoint),
        &fallbacks,
        retry.clone(),
        memory_tool.as_ref(),
        &builtin_toolsets,
        spec.source != "cron",
        extra,
    );
    if !unknown.is_empty() {
        // As the reference: named, and the session starts without them.
        notices.push(Notice::Warning(format!(
            "Unknown toolsets: {} (ignored; `hermes tools list` shows the known ones)",
            unknown.join(", ")
        )));
    }
    let model = endpoint.model.clone().unwrap_or_default();
    let max_turns = spec.max_turns.unwrap_or(config.agent.max_turns);
    let store = services.store();
    // Built once per session and stored with it; a resumed session sends the
    // stored prompt unchanged so the provider's prompt cache still matches.
    let mut new_prompt = || {
        let memory_block = memory_store.as_ref().and_then(|store| {
            let snapshot = hermes_tools::builtin::memory::session_snapshot(
                store,
                memory_settings.memory_enabled,
                memory_settings.user_profile_enabled,
            );
            // An unreadable store costs the session its memory, not its start.
            snapshot.unwrap_or_else(|e| {
                notices.push(Notice::Warning(format!(
                    "memory is off for this session: {e}"
                )));
                None
            })
        });
        let (text, warnings) = crate::prompt::build_system_prompt(crate::prompt::PromptContext {
            home,
            env,
            cwd: &spec.cwd,
            model: &model,
            provider: &endpoint.provider,
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
    };
    let (session_id, system_prompt, history) = match (&spec.resume, &store) {
        (Some(request), Some(db)) => {
            let found = store::find(db.as_ref(), request, &spec.source)
                .map_err(|e| SessionError::Store(e.0))?;
            db.reopen_session(&found.id)
                .map_err(|e| SessionError::Store(e.0))?;
            let prompt = found.system_prompt.unwrap_or_else(&mut new_prompt);
            (found.id, prompt, found.history)
        }
        (Some(_), None) => {
            return Err(SessionError::Store(format!(
                "cannot resume: {}",
                services
                    .store_problem()
                    .unwrap_or_else(|| "no session store".into())
            )));
        }
        (None, Some(db))
            if spec
                .seed
                .as_ref()
                .is_some_and(|seed| matches!(db.session(&seed.session_id), Ok(Some(_)))) =>
        {
            // A client-held conversation seen before: continue its row.
            let seed = spec
                .seed
                .as_ref()
                .map(|s| s.session_id.clone())
                .unwrap_or_default();
            let row = db.session(&seed).map_err(|e| SessionError::Store(e.0))?;
            if row.as_ref().is_some_and(|r| r.ended_at.is_some()) {
                db.reopen_session(&seed)
                    .map_err(|e| SessionError::Store(e.0))?;
            }
            let prompt = row
                .and_then(|r| r.system_prompt)
                .unwrap_or_else(&mut new_prompt);
            (seed, prompt, Vec::new())
        }
        (None, _) => {
            let id = spec
                .seed
                .as_ref()
                .map(|s| s.session_id.clone())
                .unwrap_or_else(crate::session_id::new_session_id);
            let prompt = new_prompt();
            match &store {
                Some(db) => db
                    .create_session(&store::new_session_row(
                        &id,
                        &spec.source,
                        &model,
                        &prompt,
                        &spec.cwd.display().to_string(),
                        max_turns,
                    ))
                    .and_then(|()| match &spec.routing {
                        Some(routing) => db.set_routing(&id, routing),
                        None => Ok(()),
                    })
                    .map_err(|e| SessionError::Store(e.0))?,
                None => {
                    if let Some(e) = services.required_store_error() {
                        return Err(SessionError::Store(e));
                    }
                    notices.extend(services.store_problem().map(Notice::Warning));
                }
            }
            (id, prompt, Vec::new())
        }
    };
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
    let gate = questions::approval_gate(config, home, spec.yolo, presence);
    let clarifier = spec.interactive.then(|| {
        Arc::new(EventClarifier {
            questions: questions.clone(),
            events: events_tx.clone(),
            timeout: questions::clarify_timeout(config),
        }) as Arc<dyn Clarifier>
    });
    let limits = ContextLengthCache::new(home.context_length_cache());
    let context_length = config
        .model
        .context_length
        .or_else(|| limits.get(&model, &endpoint.base_url));
    let options = AgentOptions {
        model: model.clone(),
        max_turns,
        max_tokens: None,
        temperature: None,
        cwd: cwd.clone(),
        session_id: session_id.clone(),
        homes: Homes {
            home: env.get("HOME").map(Into::into),
            hermes_home: Some(home.root().to_path_buf()),
        },
    };
    let titler = titler(
        services,
        spec,
        (&provider, &endpoint),
        store.as_ref(),
        &mut notices,
    );
    // A conversation that goes on hears when its background processes end.
    let processes = if spec.interactive {
        hermes_tools::processes::ProcessTable::announcing()
    } else {
        hermes_tools::processes::ProcessTable::default()
    };
    let mut builder = Agent::builder(provider, tools, options)
        .processes(Arc::new(processes))
        // `checkpoints.enabled` is for terminal sessions, as in the reference:
        // a server's sessions would each block on snapshots of shared trees.
        // Files on another machine or in a container are snapshotted there.
        .checkpoints(Arc::new(crate::checkpoints::checkpoints_in(
            services.setup(),
            spec.checkpoints,
            spec.source == "cli",
            &place.env,
        )))
        .system_prompt(Some(with_ephemeral(&system_prompt, spec)))
        .history(match &spec.seed {
            Some(seed) => seed.history.clone(),
            None => history,
        })
        .approvals(gate.clone())
        .clarifier(clarifier)
        .context_length(context_length)
        .limit_store(Box::new(CachedLimits::new(
            limits,
            endpoint.base_url.clone(),
        )))
        .compression(CompressorConfig::from_section(&config.sections.compression))
        .guardrails(GuardrailConfig::from_section(
            &config.sections.tool_loop_guardrails,
        ))
        .retry_policy(retry)
        .dynamic_tools(mcp_tools)
        .hooks(if spec.hooks.0.is_empty() {
            services.hooks()
        } else {
            Arc::new(services.hooks().prepended(&spec.hooks.0))
        })
        .platform(spec.source.clone())
        .client_files(spec.client_files.clone())
        .strict_store(services.shared().is_some())
        .hidden_env(crate::secrets::credential_vars(setup))
        .environment(place.env.clone());
    match crate::auxiliary::summarizer(services, &endpoint) {
        Ok(Some(route)) => builder = builder.auxiliary(route.provider, route.model),
        Ok(None) => {}
        Err(e) => notices.push(Notice::Warning(format!(
            "auxiliary.compression is not usable ({e}); the main model will write compression summaries"
        ))),
    }
    for (remote, fallback_model) in fallbacks {
        builder = builder.fallback(remote, fallback_model);
    }
    if let Some(db) = &store {
        builder = builder.store(Box::new(SessionRecorder::new(
            db.clone(),
            &session_id,
            &model,
            &endpoint.provider,
            &endpoint.base_url,
        )));
    }
    Ok(Assembled {
        agent: builder.build(),
        endpoint,
        memory_tool,
        toolsets,
        preload,
        notices,
        gate,
        questions,
        events: (events_tx, events_rx),
        store,
        titler,
    })
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

/// `web_search` and `web_extract`, as config.yaml and the keys set them up.
fn register_web(services: &Services, all: &mut Registry) {
    let Ok(http) = services.http() else {
        return;
    };
    let web = services.web();
    for tool in hermes_web::tools(web.settings.clone(), http.client(), web.fetcher.clone()) {
        all.register(tool);
    }
}

/// The `ha_*` tools (offered when `HASS_TOKEN` is set).
pub(crate) fn register_home_assistant(services: &Services, all: &mut Registry) {
    let Ok(http) = services.http() else {
        return;
    };
    let setup = services.setup();
    let settings =
        hermes_homeassistant::HaSettings::from_env(&|k| setup.env.get(k).map(str::to_owned));
    for tool in hermes_homeassistant::tools(settings, http.client()) {
        all.register(tool);
    }
}

/// The model that looks at images for this session, when one can.
fn vision_model(
    services: &Services,
    parent: (&Arc<dyn Provider>, &Endpoint),
) -> Option<Arc<dyn hermes_web::vision::VisionModel>> {
    let main = hermes_agent::Route {
        provider: parent.0.clone(),
        model: parent.1.model.clone().unwrap_or_default(),
    };
    let route = crate::auxiliary::vision(services, parent.1, &main).ok()??;
    Some(Arc::new(crate::auxiliary::VisionRoute(route)))
}

/// `vision_analyze` and the `browser_*` tools (when a Chromium is installed).
fn register_sight(
    services: &Services,
    parent: (&Arc<dyn Provider>, &Endpoint),
    all: &mut Registry,
) {
    let web = services.web();
    let setup = services.setup();
    let vision = vision_model(services, parent);
    if let Some(model) = &vision {
        all.register(Arc::new(hermes_web::vision::VisionTool::new(
            model.clone(),
            web.settings.policy,
            setup.home.root().to_path_buf(),
            web.fetcher.clone(),
        )));
    }
    // One browser per session, started only if a tool is used.
    if let Some(browser) = &web.browser {
        let slot = hermes_web::browser::BrowserSlot::new(browser.clone());
        for tool in hermes_web::browser::tools::all(&slot, vision) {
            all.register(tool);
        }
    }
}

/// The tools of the enabled plugins (each plugin started on first need).
async fn plugin_tools(
    services: &Services,
    notices: &mut Vec<Notice>,
) -> Vec<Arc<dyn hermes_tools::Tool>> {
    let mut tools: Vec<Arc<dyn hermes_tools::Tool>> = Vec::new();
    for plugin in services.plugins() {
        if !plugin.declares_tools() {
            continue;
        }
        match plugin.tool_schemas().await {
            Ok(schemas) => {
                for schema in schemas {
                    tools.push(Arc::new(hermes_tools::hooks::PluginTool::new(
                        plugin.clone(),
                        schema,
                    )));
                }
            }
            Err(e) => notices.push(Notice::Warning(format!(
                "plugin {}: {e}; its tools are not offered",
                plugin.name()
            ))),
        }
    }
    tools
}

/// Every tool the session offers: the built-ins, session search, delegation,
/// memory and code execution, cut down to `toolsets`, then the plugins'
/// tools (a plugin tool never replaces a built-in); with the names in
/// `toolsets` that are neither a toolset nor a tool.
#[allow(clippy::too_many_arguments)]
fn registry(
    services: &Services,
    parent: (&Arc<dyn Provider>, &Endpoint),
    fallbacks: &[(Arc<dyn Provider>, String)],
    retry: RetryPolicy,
    memory: Option<&MemoryTool>,
    toolsets: &[String],
    scheduling: bool,
    plugin_tools: Vec<Arc<dyn hermes_tools::Tool>>,
) -> (Registry, Vec<String>) {
    let setup = services.setup();
    let mut all = Registry::with_builtins();
    all.share_schemas_through(services.schema_interner().clone());
    all.register(Arc::new(match services.shared() {
        // Replicas: the history is the shared database's, not this host's state.db.
        Some(shared) => SessionSearchTool::shared(shared.history),
        None => SessionSearchTool::new(setup.home.state_db()),
    }));
    all.register(Arc::new(crate::delegation::delegate_tool(
        services, parent, fallbacks, retry,
    )));
    if let Some(tool) = memory {
        all.register(Arc::new(tool.clone()));
    }
    register_web(services, &mut all);
    register_home_assistant(services, &mut all);
    register_sight(services, parent, &mut all);
    // A scheduled run must not schedule more runs.
    if scheduling {
        all.register(Arc::new(crate::cron::tool::CronjobTool::new(
            crate::SessionManager::with_services(services.clone()),
        )));
    }
    // Registered before filtering so the toolsets decide whether it is offered;
    // rebuilt after so its sandbox lists only the tools this session really has.
    let settings = CodeExecSettings::from_section(&setup.config.sections.code_execution);
    code_exec::register(&mut all, settings.clone());
    let (mut tools, unknown) = all.filtered(toolsets);
    let disabled = setup.config.disabled_toolsets();
    if !disabled.is_empty() {
        let (off, _) = tools.filtered(&disabled);
        let names: Vec<String> = off.names().map(str::to_owned).collect();
        for name in names {
            tools.unregister(&name);
        }
    }
    for tool in plugin_tools {
        if all.get(tool.name()).is_none() {
            tools.register(tool);
        }
    }
    code_exec::refresh(&mut tools, settings);
    (tools, unknown)
}
