//! `hermes version`, `hermes status` and `hermes config show`: what is
//! installed and configured, at a glance, secrets masked.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use hermes_session::{Setup, SetupError};

/// Provider keys shown by `status` and `config show`: (label, variable).
const KEYS: &[(&str, &str)] = &[
    ("OpenRouter", "OPENROUTER_API_KEY"),
    ("OpenAI", "OPENAI_API_KEY"),
    ("Anthropic", "ANTHROPIC_API_KEY"),
    ("Google / Gemini", "GEMINI_API_KEY"),
    ("DeepSeek", "DEEPSEEK_API_KEY"),
    ("xAI / Grok", "XAI_API_KEY"),
    ("Z.AI / GLM", "GLM_API_KEY"),
    ("Kimi", "KIMI_API_KEY"),
    ("MiniMax", "MINIMAX_API_KEY"),
    ("Exa", "EXA_API_KEY"),
    ("Firecrawl", "FIRECRAWL_API_KEY"),
    ("Tavily", "TAVILY_API_KEY"),
    ("GitHub", "GITHUB_TOKEN"),
];

/// The first line of `hermes version` / `--version`.
pub(crate) fn version_line() -> String {
    format!("Hermes Agent v{} (hermes-rs)", env!("CARGO_PKG_VERSION"))
}

/// `hermes version`: the version, where the binary is and what it has built in.
pub(crate) fn version() -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", version_line())?;
    let exe = std::env::current_exe().ok();
    let dir = exe
        .as_deref()
        .and_then(Path::parent)
        .map_or_else(|| "(unknown)".to_owned(), |d| d.display().to_string());
    writeln!(out, "Install directory: {dir}")?;
    writeln!(out, "Install method: binary")?;
    writeln!(
        out,
        "Embedded model runtime: {}",
        if cfg!(feature = "local") {
            "llama.cpp (built in)"
        } else {
            "not built in"
        }
    )?;
    Ok(ExitCode::SUCCESS)
}

/// The first executable called `name` on PATH.
pub(crate) fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

fn banner(out: &mut impl Write, title: &str) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "┌─────────────────────────────────────────────────────────┐"
    )?;
    writeln!(out, "│ {title:^55} │")?;
    writeln!(
        out,
        "└─────────────────────────────────────────────────────────┘"
    )
}

fn section(out: &mut impl Write, title: &str) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(out, "◆ {title}")
}

fn mark(ok: bool) -> char {
    if ok { '✓' } else { '✗' }
}

/// What answers a chat, in words: provider, model and endpoint, or why nothing does.
pub(crate) fn model_lines(setup: &Setup) -> Vec<(&'static str, String)> {
    match setup.endpoint(None, None) {
        Ok(ep) => {
            let mut lines = vec![
                ("Provider", ep.provider.clone()),
                (
                    "Model",
                    ep.model
                        .clone()
                        .unwrap_or_else(|| "(asked from the server)".into()),
                ),
            ];
            if !ep.base_url.is_empty() {
                lines.push(("Endpoint", ep.base_url.clone()));
            }
            lines
        }
        Err(SetupError::NoProvider { .. }) if local_model_file(setup).is_file() => vec![
            ("Provider", "local (embedded model, offline)".into()),
            ("Model", hermes_session::DEFAULT_LOCAL_FILE.into()),
        ],
        Err(SetupError::NoProvider { .. }) => vec![(
            "Provider",
            "(none: run `hermes setup`, or `hermes model pull smollm2` for the offline model)"
                .into(),
        )],
        Err(e) => vec![(
            "Provider",
            format!("(error: {})", first_line(&e.to_string())),
        )],
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// The embedded default model's file.
pub(crate) fn local_model_file(setup: &Setup) -> PathBuf {
    setup
        .home
        .models_dir()
        .join(hermes_session::DEFAULT_LOCAL_FILE)
}

fn key_lines(out: &mut impl Write, setup: &Setup) -> std::io::Result<()> {
    for (label, var) in KEYS {
        let shown = setup
            .env
            .get(var)
            .filter(|v| !v.is_empty())
            .map(hermes_llm::redact::mask_token);
        match shown {
            Some(masked) => writeln!(out, "  {label:<16} ✓ {masked}")?,
            None => writeln!(out, "  {label:<16} ✗ (not set)")?,
        }
    }
    Ok(())
}

/// `hermes status`.
pub(crate) fn status(setup: &Setup) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    banner(&mut out, "⚕ Hermes Agent Status")?;
    section(&mut out, "Environment")?;
    writeln!(out, "  Home:         {}", setup.home.root().display())?;
    let env_file = setup.home.env_file();
    writeln!(
        out,
        "  .env file:    {} {}",
        mark(env_file.is_file()),
        if env_file.is_file() {
            "exists"
        } else {
            "not found"
        }
    )?;
    let config_file = setup.home.config_file();
    writeln!(
        out,
        "  config.yaml:  {} {}",
        mark(config_file.is_file()),
        if config_file.is_file() {
            "exists"
        } else {
            "not found (defaults)"
        }
    )?;
    for (label, value) in model_lines(setup) {
        writeln!(out, "  {:<13} {value}", format!("{label}:"))?;
    }
    section(&mut out, "API Keys")?;
    key_lines(&mut out, setup)?;
    section(&mut out, "Local Model")?;
    let gguf = local_model_file(setup);
    if gguf.is_file() {
        writeln!(out, "  SmolLM2-135M: ✓ {}", gguf.display())?;
    } else {
        writeln!(
            out,
            "  SmolLM2-135M: ✗ not downloaded (run: hermes model pull smollm2)"
        )?;
    }
    section(&mut out, "Gateway")?;
    match hermes_gateway::lock::running_pid(setup.home.root()) {
        Some(pid) => writeln!(out, "  Status:       ✓ running (pid {pid})")?,
        None => writeln!(out, "  Status:       ✗ stopped")?,
    }
    section(&mut out, "Scheduled Jobs")?;
    writeln!(out, "  Jobs:         {}", cron_jobs(setup))?;
    section(&mut out, "Sessions")?;
    let sessions = if setup.home.state_db().is_file() {
        hermes_state::session_db::SessionDb::open(&setup.home.state_db())
            .ok()
            .and_then(|db| db.session_count().ok())
            .map_or_else(
                || "(state.db unreadable: run hermes doctor)".into(),
                |n| n.to_string(),
            )
    } else {
        "0".to_owned()
    };
    writeln!(out, "  Stored:       {sessions}")?;
    writeln!(out)?;
    writeln!(
        out,
        "────────────────────────────────────────────────────────────"
    )?;
    writeln!(out, "  Run 'hermes doctor' for detailed diagnostics")?;
    writeln!(out, "  Run 'hermes setup' to configure")?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}

/// "N active, M total" from `cron/jobs.json` (the reference's file, or its
/// row in the database replicas share).
fn cron_jobs(setup: &Setup) -> String {
    let book = match hermes_session::stores::documents(setup) {
        Ok(docs) => hermes_session::cron::jobs::Book {
            home: setup.home.root().to_path_buf(),
            docs,
        },
        Err(e) => return format!("(cannot read the jobs: {e})"),
    };
    // No jobs document at all reads "0", as the reference prints it.
    match book.docs.read(hermes_session::cron::jobs::JOBS) {
        Ok(None) => return "0".into(),
        Ok(Some(_)) => {}
        Err(e) => return format!("(cannot read the jobs: {e})"),
    }
    let jobs = match hermes_session::cron::jobs::load(&book) {
        Ok(jobs) => jobs,
        Err(e) => return format!("({e})"),
    };
    let active = jobs
        .iter()
        .filter(|j| j.get("enabled").and_then(serde_json::Value::as_bool) != Some(false))
        .count();
    format!("{active} active, {} total", jobs.len())
}

/// `hermes config show`.
pub(crate) fn show_config(setup: &Setup) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let cfg = &setup.config;
    let text = |key: &str, default: &str| {
        cfg.get(key).map_or_else(
            || default.to_owned(),
            |v| match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Bool(true) => "yes".into(),
                serde_json::Value::Bool(false) => "no".into(),
                other => other.to_string(),
            },
        )
    };
    banner(&mut out, "⚕ Hermes Configuration")?;
    section(&mut out, "Paths")?;
    writeln!(
        out,
        "  Config:       {}",
        setup.home.config_file().display()
    )?;
    writeln!(out, "  Secrets:      {}", setup.home.env_file().display())?;
    writeln!(out, "  Home:         {}", setup.home.root().display())?;
    section(&mut out, "API Keys")?;
    key_lines(&mut out, setup)?;
    section(&mut out, "Model")?;
    for (label, value) in model_lines(setup) {
        writeln!(out, "  {:<13} {value}", format!("{label}:"))?;
    }
    writeln!(out, "  Max turns:    {}", cfg.agent.max_turns)?;
    writeln!(out, "  Toolsets:     {}", cfg.toolsets.join(", "))?;
    section(&mut out, "Display")?;
    writeln!(
        out,
        "  Personality:  {}",
        text("display.personality", "none")
    )?;
    writeln!(
        out,
        "  Reasoning:    {}",
        text("display.show_reasoning", "no")
    )?;
    section(&mut out, "Terminal")?;
    writeln!(out, "  Backend:      {}", text("terminal.backend", "local"))?;
    writeln!(out, "  Working dir:  {}", text("terminal.cwd", "."))?;
    writeln!(out, "  Timeout:      {}s", text("terminal.timeout", "180"))?;
    section(&mut out, "Context Compression")?;
    writeln!(
        out,
        "  Enabled:      {}",
        text("compression.enabled", "yes")
    )?;
    writeln!(
        out,
        "  Threshold:    {}",
        text("compression.threshold", "0.5")
    )?;
    section(&mut out, "MCP Servers")?;
    match cfg.get("mcp_servers").and_then(|v| v.as_object()) {
        Some(servers) if !servers.is_empty() => {
            for name in servers.keys() {
                writeln!(out, "  {name}")?;
            }
        }
        _ => writeln!(out, "  (none)")?,
    }
    writeln!(out)?;
    writeln!(
        out,
        "────────────────────────────────────────────────────────────"
    )?;
    writeln!(out, "  hermes config edit     # Edit config file")?;
    writeln!(out, "  hermes config set <key> <value>")?;
    writeln!(out, "  hermes setup           # Run setup wizard")?;
    writeln!(out)?;
    Ok(())
}
