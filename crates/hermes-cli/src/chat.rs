//! `hermes chat` and `hermes -z`: set up an agent from config and run turns.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use hermes_agent::{Agent, AgentError, AgentOptions, RetryPolicy};
use hermes_llm::api_mode::ApiMode;
use hermes_llm::credentials::{
    BuildWithKey, CredentialPool, PooledProvider, Strategy, SystemClock,
};
use hermes_llm::{ChatCompletionsConfig, ChatCompletionsProvider, LlmError, Provider};
use hermes_protocol::{Event, TurnEnd};
use hermes_state::context_cache::ContextLengthCache;
use hermes_state::memory::{MemorySettings, MemoryStore};
use hermes_state::session_db::SessionDb;
use hermes_state::{Config, Env, HermesHome};
use hermes_tools::builtin::memory::MemoryTool;
use hermes_tools::builtin::session_search::SessionSearchTool;
use hermes_tools::{Homes, Registry};
use tokio_util::sync::CancellationToken;

use crate::args::{ChatArgs, Cli, Command, RunArgs};
use crate::history::{self, DbStore, ResumeRequest};
use crate::render::{Renderer, Verbosity};
use crate::runtime::{self, Runtime};
use crate::session_id::new_session_id;
use crate::setup::Setup;

/// Exit code when the turn was interrupted (as shells report SIGINT).
const EXIT_INTERRUPTED: u8 = 130;

/// How the output of a run is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Streamed answer, tool progress, session id hint.
    Interactive,
    /// `chat -Q`: final answer on stdout, `session_id:` on stderr.
    Quiet,
    /// `-z`: final answer only.
    Oneshot,
}

/// Entry point after argument parsing.
pub async fn dispatch(cli: Cli) -> ExitCode {
    let result = match (cli.oneshot, cli.command) {
        (Some(prompt), _) => match preloaded_skills(&cli.run) {
            Ok(Some(skills)) => {
                run_query(&cli.run, format!("{skills}\n\n{prompt}"), Mode::Oneshot).await
            }
            Ok(None) => run_query(&cli.run, prompt, Mode::Oneshot).await,
            Err(e) => Err(e),
        },
        (None, Some(Command::Chat(chat))) => run_chat(chat, &cli.run).await,
        (None, Some(Command::Sessions(args))) => crate::sessions::run(*args),
        (None, Some(Command::Model(args))) => crate::model_cmd::run(args, &cli.run).await,
        (None, Some(Command::Auth(args))) => crate::auth_cmd::run(args),
        (None, Some(Command::Skills(args))) => crate::skills_cmd::run(args),
        (None, None) => {
            run_chat(
                ChatArgs {
                    query: None,
                    quiet: false,
                    run: RunArgs::default(),
                },
                &cli.run,
            )
            .await
        }
    };
    result.unwrap_or_else(|e| fail(&e))
}

/// Prints an error the way the binary reports them and returns exit code 1.
pub fn fail(err: &anyhow::Error) -> ExitCode {
    #[allow(clippy::print_stderr)]
    {
        eprintln!("error: {err:#}");
    }
    ExitCode::FAILURE
}

/// `-s`: the skills' text, which rides in front of the first user message (not
/// in the system prompt, so the prompt cache still matches).
fn preloaded_skills(run: &RunArgs) -> Result<Option<String>> {
    run.skills
        .as_deref()
        .map(crate::skills_cmd::preload_prompt)
        .transpose()
}

async fn run_chat(chat: ChatArgs, top: &RunArgs) -> Result<ExitCode> {
    let run = merge(&chat.run, top);
    let preload = preloaded_skills(&run)?;
    let with_skills = |q: String| match &preload {
        Some(text) => format!("{text}\n\n{q}"),
        None => q,
    };
    match chat.query {
        Some(q) => {
            run_query(
                &run,
                with_skills(q),
                if chat.quiet {
                    Mode::Quiet
                } else {
                    Mode::Interactive
                },
            )
            .await
        }
        None if std::io::stdin().is_terminal() => crate::repl::run(&run, chat.quiet, preload).await,
        None => {
            let mut input = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)
                .context("reading the prompt from stdin")?;
            if input.trim().is_empty() {
                anyhow::bail!("no prompt given: pass one with -q \"…\" or on standard input");
            }
            run_query(
                &run,
                with_skills(input),
                if chat.quiet {
                    Mode::Quiet
                } else {
                    Mode::Interactive
                },
            )
            .await
        }
    }
}

/// Subcommand flags win over the same flags given before the subcommand.
fn merge(sub: &RunArgs, top: &RunArgs) -> RunArgs {
    RunArgs {
        model: sub.model.clone().or_else(|| top.model.clone()),
        provider: sub.provider.clone().or_else(|| top.provider.clone()),
        toolsets: sub.toolsets.clone().or_else(|| top.toolsets.clone()),
        max_turns: sub.max_turns.or(top.max_turns),
        yolo: sub.yolo || top.yolo,
        ignore_user_config: sub.ignore_user_config || top.ignore_user_config,
        ignore_rules: sub.ignore_rules || top.ignore_rules,
        resume: sub.resume.clone().or_else(|| top.resume.clone()),
        continue_last: sub
            .continue_last
            .clone()
            .or_else(|| top.continue_last.clone()),
        skills: sub.skills.clone().or_else(|| top.skills.clone()),
    }
}

/// The resume request the flags make, if any.
fn resume_request(run: &RunArgs) -> Option<ResumeRequest> {
    match (&run.resume, &run.continue_last) {
        (Some(key), _) => Some(ResumeRequest::Resume(key.clone())),
        (None, Some(name)) => Some(ResumeRequest::Continue(
            Some(name.clone()).filter(|n| !n.is_empty()),
        )),
        (None, None) => None,
    }
}

/// Everything a session needs, built from flags, config and environment.
pub(crate) struct Session {
    pub(crate) agent: Agent,
    pub(crate) emojis: HashMap<String, String>,
    pub(crate) runtime: Runtime,
    /// The session store, when it could be opened.
    pub(crate) db_path: Option<PathBuf>,
    /// A handle on the registered memory tool, to reset its per-turn retry budget.
    memory_tool: Option<MemoryTool>,
    /// The Hermes home the session was built from (history file, config).
    pub(crate) home: HermesHome,
    /// The toolsets enabled, for the banner.
    pub(crate) toolsets: Vec<String>,
    /// Where `agent.log` goes and what it keeps.
    pub(crate) log_settings: crate::agent_log::LogSettings,
}

pub(crate) async fn build_session(run: &RunArgs) -> Result<Session> {
    let setup = Setup::load(run.ignore_user_config)?;
    let Setup { env, home, config } = &setup;
    let mut rt = match setup.runtime(run.provider.as_deref(), run.model.as_deref()) {
        Ok(rt) => rt,
        Err(runtime::SetupError::NoProvider { .. }) if local_model_available(home) => {
            let mut err = std::io::stderr();
            let _ = writeln!(
                err,
                "No provider configured: answering with the local model (offline). Configure a provider for stronger answers."
            );
            Runtime {
                provider: "local".into(),
                base_url: String::new(),
                api_key: None,
                api_mode: hermes_llm::api_mode::ApiMode::ChatCompletions,
                model: None,
            }
        }
        Err(e) => return Err(e.into()),
    };
    let provider: Arc<dyn Provider> = if rt.provider == "local" {
        local_provider(&mut rt, home, config)?
    } else {
        let remote = remote_provider(&rt, home, config, env)?;
        if rt.model.is_none() {
            rt.model = Some(discover_model(&remote, &rt).await?);
        }
        remote
    };
    let toolsets: Vec<String> = match &run.toolsets {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
        None => config.toolsets.clone(),
    };
    let mut fallbacks = Vec::new();
    for fb in runtime::fallbacks(config, env)
        .map_err(|e| anyhow::anyhow!("{}: {e}", home.config_file().display()))?
    {
        let remote = remote_provider(&fb, home, config, env)?;
        fallbacks.push((remote, fb.model.unwrap_or_default()));
    }
    let retry = RetryPolicy {
        max_retries: config.agent.api_max_retries,
        ..RetryPolicy::default()
    };
    let mut all_tools = Registry::with_builtins();
    all_tools.register(Arc::new(SessionSearchTool::new(home.state_db())));
    all_tools.register(Arc::new(crate::delegation::delegate_tool(
        &setup,
        (&provider, &rt),
        &fallbacks,
        retry.clone(),
    )));
    // --ignore-rules skips memory entirely, as the reference's skip_memory does.
    let memory_settings = MemorySettings::from_config(config);
    let memory_store = (!run.ignore_rules && memory_settings.any_enabled())
        .then(|| MemoryStore::for_home(home, memory_settings.limits));
    let memory_tool = memory_store.clone().map(MemoryTool::new);
    if let Some(tool) = &memory_tool {
        all_tools.register(Arc::new(tool.clone()));
    }
    // Registered before filtering so the toolsets decide whether it is offered;
    // rebuilt after so its sandbox lists only the tools this session really has.
    let code_exec =
        hermes_agent::code_exec::CodeExecSettings::from_value(config.raw.get("code_execution"));
    hermes_agent::code_exec::register(&mut all_tools, code_exec.clone());
    let mut tools = all_tools.filtered(&toolsets)?;
    hermes_agent::code_exec::refresh(&mut tools, code_exec);
    let emojis = tools
        .names()
        .filter_map(|n| tools.get(n).map(|t| (n.to_owned(), t.emoji().to_owned())))
        .collect();
    let model = rt.model.clone().unwrap_or_default();
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let max_turns = run.max_turns.unwrap_or(config.agent.max_turns);
    let db_path = home.state_db();
    let opened = SessionDb::open(&db_path);
    // Built once per session and stored with it; a resumed session sends the
    // stored prompt unchanged so the provider's prompt cache still matches.
    let new_prompt = || {
        crate::prompt::build_system_prompt(crate::prompt::PromptContext {
            home,
            env,
            cwd: &cwd,
            model: &model,
            provider: &rt.provider,
            tools: tools.names().map(str::to_owned).collect(),
            ignore_rules: run.ignore_rules,
            // Read once, here: writes made during this session reach the
            // prompt of the next one, never this one's.
            memory_block: memory_store.as_ref().and_then(|store| {
                memory_snapshot(
                    store,
                    memory_settings.memory_enabled,
                    memory_settings.user_profile_enabled,
                )
            }),
        })
    };
    let (session_id, system_prompt, past, db) = match (resume_request(run), opened) {
        (Some(request), Ok(mut db)) => {
            let found = history::find(&db, &request)?;
            db.reopen_session(&found.id)?;
            let prompt = found.system_prompt.unwrap_or_else(new_prompt);
            (found.id, prompt, found.history, Some(db))
        }
        (Some(_), Err(e)) => {
            return Err(
                anyhow::anyhow!(e).context(format!("cannot open {} to resume", db_path.display()))
            );
        }
        (None, opened) => {
            let id = new_session_id();
            let prompt = new_prompt();
            let db = match opened {
                Ok(mut db) => {
                    history::create(
                        &mut db,
                        &id,
                        &model,
                        &prompt,
                        &cwd.display().to_string(),
                        max_turns,
                    )?;
                    Some(db)
                }
                Err(e) => {
                    let mut err = std::io::stderr();
                    let _ = writeln!(
                        err,
                        "warning: session history is off: cannot open {}: {e}",
                        db_path.display()
                    );
                    None
                }
            };
            (id, prompt, Vec::new(), db)
        }
    };
    let options = AgentOptions {
        model: model.clone(),
        max_turns,
        max_tokens: None,
        temperature: None,
        cwd,
        session_id: session_id.clone(),
        homes: Homes {
            home: env.get("HOME").map(Into::into),
            hermes_home: Some(home.root().to_path_buf()),
        },
    };
    let mut agent = Agent::new(provider, tools, options, Some(system_prompt), past);
    // One-shot and piped runs have nobody to ask; the REPL may swap in an interactive gate.
    agent.set_approvals(crate::approval_prompt::build_gate(
        config, home, run.yolo, false,
    ));
    let limits = ContextLengthCache::new(home.context_length_cache());
    if let Some(tokens) = config
        .model
        .context_length
        .or_else(|| limits.get(&model, &rt.base_url))
    {
        agent.set_context_length(tokens);
    }
    agent.set_limit_store(Box::new(history::CachedLimits::new(
        limits,
        rt.base_url.clone(),
    )));
    crate::auxiliary::configure(&mut agent, &setup, &rt);
    agent.set_guardrails(hermes_agent::GuardrailConfig::from_value(
        config.get("tool_loop_guardrails"),
    ));
    agent.set_retry_policy(retry);
    for (remote, fallback_model) in fallbacks {
        agent.add_fallback(remote, fallback_model);
    }
    let db_path = db.map(|db| {
        let store = DbStore::new(
            db,
            session_id.clone(),
            model,
            rt.provider.clone(),
            rt.base_url.clone(),
        );
        agent.set_store(Box::new(store));
        db_path
    });
    Ok(Session {
        agent,
        emojis,
        runtime: rt,
        db_path,
        memory_tool,
        home: home.clone(),
        toolsets,
        log_settings: crate::agent_log::LogSettings::from_config(home, config),
    })
}

/// The frozen memory block for a new session's prompt; an unreadable store
/// costs the session its memory, not its start.
fn memory_snapshot(store: &MemoryStore, memory: bool, user: bool) -> Option<String> {
    match hermes_tools::builtin::memory::session_snapshot(store, memory, user) {
        Ok(block) => block,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "warning: memory is off for this session: {e}"
            );
            None
        }
    }
}

/// Whether the default local model has been fetched.
fn local_model_available(home: &HermesHome) -> bool {
    cfg!(feature = "local") && home.models_dir().join(DEFAULT_LOCAL_FILE).is_file()
}

/// File name of the default local model (kept here so builds without the
/// `local` feature still recognise it).
const DEFAULT_LOCAL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

#[cfg(feature = "local")]
fn local_provider(
    rt: &mut Runtime,
    home: &HermesHome,
    config: &Config,
) -> Result<Arc<dyn Provider>> {
    let path = match &rt.model {
        Some(m) => PathBuf::from(m),
        None => hermes_local::models::default_path(&home.models_dir()),
    };
    let mut local = hermes_local::LocalConfig::new(&path);
    if let Some(n) = config
        .model
        .context_length
        .and_then(|n| u32::try_from(n).ok())
    {
        local.context_length = n;
    }
    if let Some(t) = config
        .get("local.threads")
        .and_then(serde_json::Value::as_u64)
    {
        local.threads = usize::try_from(t).unwrap_or(1).max(1);
    }
    // `local.prompt_cache: false` keeps nothing between runs.
    if config.get("local.prompt_cache") != Some(&serde_json::Value::Bool(false)) {
        local.prompt_cache = Some(home.cache_dir().join("local_prompt"));
    }
    let provider = hermes_local::LocalProvider::start(local)?;
    rt.model = Some(path.display().to_string());
    Ok(Arc::new(provider))
}

#[cfg(not(feature = "local"))]
fn local_provider(
    _rt: &mut Runtime,
    _home: &HermesHome,
    _config: &Config,
) -> Result<Arc<dyn Provider>> {
    anyhow::bail!(
        "this hermes was built without the embedded model (cargo feature `local`): configure a remote provider instead"
    )
}

/// The transport for a remote runtime, by its wire protocol; keys come from the
/// credential pool in `auth.json` when it holds any for this provider.
pub(crate) fn remote_provider(
    rt: &Runtime,
    home: &HermesHome,
    config: &Config,
    env: &Env,
) -> Result<Arc<dyn Provider>> {
    let auth = home.root().join("auth.json");
    if auth.is_file() {
        let strategy = config
            .get(&format!("credential_pool_strategies.{}", rt.provider))
            .and_then(serde_json::Value::as_str);
        let pool = CredentialPool::load(
            &auth,
            &rt.provider,
            Strategy::resolve(strategy),
            Arc::new(SystemClock),
        )
        .map_err(|e| anyhow::anyhow!("{}: {e}", auth.display()))?;
        if pool.has_credentials() {
            let template = rt.clone();
            let (config, env) = (config.clone(), env.clone());
            let build: BuildWithKey = Box::new(move |key| {
                let keyed = Runtime {
                    api_key: Some(key.to_owned()),
                    ..template.clone()
                };
                transport(&keyed, &config, &env).map_err(|e| LlmError::Config(e.to_string()))
            });
            if let Some(pooled) = PooledProvider::new(rt.provider.clone(), pool, build)? {
                return Ok(Arc::new(pooled));
            }
        }
    }
    transport(rt, config, env)
}

/// The provider for `rt`'s wire protocol; `config` and `env` hold what Bedrock
/// needs besides the runtime (region, AWS credentials).
fn transport(rt: &Runtime, config: &Config, env: &Env) -> Result<Arc<dyn Provider>> {
    match rt.api_mode {
        ApiMode::ChatCompletions => Ok(Arc::new(ChatCompletionsProvider::new(
            rt.provider.clone(),
            ChatCompletionsConfig {
                api_key: rt.api_key.clone(),
                prompt_cache: runtime::envelope_cache(rt, config),
                ..ChatCompletionsConfig::new(rt.base_url.clone())
            },
        )?)),
        ApiMode::AnthropicMessages => {
            let cfg = hermes_llm::AnthropicConfig {
                reasoning_effort: reasoning_effort(config),
                cache_ttl: config
                    .get("prompt_caching.cache_ttl")
                    .and_then(serde_json::Value::as_str)
                    .and_then(hermes_llm::CacheTtl::parse)
                    .unwrap_or_default(),
                ..hermes_llm::AnthropicConfig::new(
                    rt.base_url.clone(),
                    rt.api_key.clone().unwrap_or_default(),
                )
            };
            Ok(Arc::new(hermes_llm::AnthropicProvider::new(
                rt.provider.clone(),
                cfg,
            )?))
        }
        ApiMode::CodexResponses => Ok(Arc::new(hermes_llm::ResponsesProvider::new(
            rt.provider.clone(),
            hermes_llm::ResponsesConfig {
                api_key: rt.api_key.clone(),
                ..hermes_llm::ResponsesConfig::new(rt.base_url.clone())
            },
        )?)),
        ApiMode::BedrockConverse => {
            let auth = runtime::bedrock_auth(env).ok_or_else(|| {
                runtime::SetupError::NoAwsCredentials {
                    home: env.get("HERMES_HOME").unwrap_or("$HERMES_HOME").to_owned(),
                }
            })?;
            // The region in the signature must be the endpoint's; a proxy or
            // custom endpoint falls back to the configured one.
            let region = hermes_llm::bedrock::region_from_endpoint(&rt.base_url)
                .unwrap_or_else(|| runtime::bedrock_region(config, env));
            let cfg = hermes_llm::BedrockConfig::new(rt.base_url.clone(), region, auth);
            Ok(Arc::new(hermes_llm::BedrockProvider::new(
                rt.provider.clone(),
                cfg,
            )?))
        }
    }
}

/// `agent.reasoning_effort` (`none`, `low` … `xhigh`); empty means the provider's default.
fn reasoning_effort(config: &Config) -> Option<String> {
    config
        .get("agent.reasoning_effort")
        .and_then(serde_json::Value::as_str)
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| !e.is_empty())
}

async fn discover_model(provider: &Arc<dyn Provider>, rt: &Runtime) -> Result<String> {
    match provider.list_models().await {
        Ok(models) if !models.is_empty() => Ok(models[0].clone()),
        Ok(_) => anyhow::bail!(
            "the server at {} lists no models: set model.default in config.yaml or pass -m MODEL",
            rt.base_url
        ),
        Err(e) => anyhow::bail!(
            "no model configured and the server at {} could not list its models ({e}): set model.default in config.yaml or pass -m MODEL",
            rt.base_url
        ),
    }
}

async fn run_query(run: &RunArgs, prompt: String, mode: Mode) -> Result<ExitCode> {
    let mut session = build_session(run).await?;
    let verbosity = if mode == Mode::Interactive {
        Verbosity::Normal
    } else {
        Verbosity::FinalOnly
    };
    let outcome = run_turn(&mut session, &prompt, verbosity, false).await;
    finish(&session, mode)?;
    report(&session, outcome, mode)
}

impl Session {
    /// The session id now: a compression continues the transcript in a child session.
    pub(crate) fn id(&self) -> &str {
        &self.agent.options().session_id
    }
}

/// Marks the session ended in the store and tells the user how to come back to it.
pub(crate) fn finish(session: &Session, mode: Mode) -> Result<()> {
    let Some(path) = &session.db_path else {
        return Ok(());
    };
    let mut err = std::io::stderr();
    match SessionDb::open(path)
        .and_then(|mut db| db.end_session(session.id(), "cli_close").map(|()| db))
    {
        Ok(db) => {
            let _ = db.close();
        }
        Err(e) => writeln!(err, "warning: could not close the session record: {e}")?,
    }
    if mode == Mode::Interactive {
        writeln!(
            err,
            "Resume this session with:\n  hermes --resume {}",
            session.id()
        )?;
    }
    Ok(())
}

pub(crate) async fn run_turn(
    session: &mut Session,
    prompt: &str,
    verbosity: Verbosity,
    rich: bool,
) -> Result<hermes_agent::TurnResult, AgentError> {
    run_turn_with(session, prompt, verbosity, rich, CancellationToken::new()).await
}

/// [`run_turn`] with a cancel token the caller can also fire (`/stop` typed mid-turn).
pub(crate) async fn run_turn_with(
    session: &mut Session,
    prompt: &str,
    verbosity: Verbosity,
    rich: bool,
    cancel: CancellationToken,
) -> Result<hermes_agent::TurnResult, AgentError> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let mut renderer = Renderer::new(verbosity, session.emojis.clone());
    if rich {
        renderer = renderer.rich();
    }
    let log = session.log_settings.open(session.id());
    let printer = tokio::spawn(crate::spinner::print_events(renderer, rx, Some(log)));
    let on_ctrl_c = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    if let Some(memory) = &session.memory_tool {
        memory.reset_turn();
    }
    let outcome = session.agent.run_turn(prompt, &tx, &cancel).await;
    watcher.abort();
    drop(tx);
    let _ = printer.await;
    outcome
}

fn report(
    session: &Session,
    outcome: Result<hermes_agent::TurnResult, AgentError>,
    mode: Mode,
) -> Result<ExitCode> {
    let result = match outcome {
        Ok(r) => r,
        Err(e) => anyhow::bail!("{}", explain(&e, &session.runtime)),
    };
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    if mode != Mode::Interactive {
        writeln!(out, "{}", result.final_text.trim_end())?;
    }
    if mode == Mode::Quiet {
        writeln!(err, "session_id: {}", session.id())?;
    }
    if result.reason == TurnEnd::Interrupted {
        writeln!(err, "Interrupted.")?;
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(ExitCode::SUCCESS)
}

/// A failure with advice on what to change.
pub(crate) fn explain(err: &AgentError, rt: &Runtime) -> String {
    let AgentError::Llm(llm) = err else {
        return hermes_llm::redact::redact_secrets(&err.to_string());
    };
    let advice = match llm {
        LlmError::Http {
            status: 401 | 403, ..
        } => {
            format!(
                "check the API key for provider '{}' (in $HERMES_HOME/.env or config.yaml)",
                rt.provider
            )
        }
        LlmError::Http { status: 404, .. } => format!(
            "check the model name ('{}') and base URL ({})",
            rt.model.as_deref().unwrap_or("?"),
            rt.base_url
        ),
        LlmError::Http { status: 429, .. } => {
            "the provider is rate limiting: wait a moment and try again".into()
        }
        LlmError::Http {
            status: 500..=599, ..
        } => "the provider had a server error: try again shortly".into(),
        LlmError::Transport(_) | LlmError::Timeout(_) => {
            format!(
                "could not reach {}: is the server running and the URL right?",
                rt.base_url
            )
        }
        _ => String::new(),
    };
    // Provider error bodies often echo the rejected key back.
    let llm = hermes_llm::redact::redact_secrets(&llm.to_string());
    if advice.is_empty() {
        format!("the model call failed: {llm}")
    } else {
        format!("the model call failed: {llm}\n  → {advice}")
    }
}
