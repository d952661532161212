//! `hermes doctor`: checks the home, the configuration, the model endpoint,
//! the session store and the optional helpers, and says how to fix each
//! problem. Like the reference it reports and exits 0; `--fix` creates what
//! is merely missing.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use hermes_session::{Services, Setup, SetupError};
use hermes_state::{Config, Env, HermesHome};

/// `hermes doctor` arguments.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Create what is missing (.env, config.yaml, the home's directories).
    #[arg(long)]
    fix: bool,
}

/// How long the endpoint check waits.
const PROBE_TIMEOUT: Duration = Duration::from_secs(8);

/// The report as it is printed, with the fixes collected on the way.
struct Report<W: Write> {
    out: W,
    fixes: Vec<String>,
    fixed: usize,
}

impl<W: Write> Report<W> {
    fn section(&mut self, title: &str) -> std::io::Result<()> {
        writeln!(self.out, "\n◆ {title}")
    }
    fn ok(&mut self, text: &str) -> std::io::Result<()> {
        writeln!(self.out, "  ✓ {text}")
    }
    fn warn(&mut self, text: &str) -> std::io::Result<()> {
        writeln!(self.out, "  ⚠ {text}")
    }
    fn info(&mut self, text: &str) -> std::io::Result<()> {
        writeln!(self.out, "    → {text}")
    }
    /// A problem and the fix that goes in the summary.
    fn fail(&mut self, text: &str, fix: &str) -> std::io::Result<()> {
        writeln!(self.out, "  ✗ {text}")?;
        writeln!(self.out, "    → {fix}")?;
        self.fixes.push(fix.to_owned());
        Ok(())
    }
    /// A warning whose fix goes in the summary.
    fn warn_fix(&mut self, text: &str, fix: &str) -> std::io::Result<()> {
        self.warn(text)?;
        self.info(fix)?;
        self.fixes.push(fix.to_owned());
        Ok(())
    }
}

/// Runs `hermes doctor`.
pub async fn run(args: DoctorArgs) -> Result<ExitCode> {
    let home = crate::chat::home()?;
    let mut report = Report {
        out: std::io::stdout().lock(),
        fixes: Vec::new(),
        fixed: 0,
    };
    writeln!(report.out)?;
    writeln!(
        report.out,
        "┌─────────────────────────────────────────────────────────┐"
    )?;
    writeln!(
        report.out,
        "│                    🩺 Hermes Doctor                     │"
    )?;
    writeln!(
        report.out,
        "└─────────────────────────────────────────────────────────┘"
    )?;
    let setup = configuration(&mut report, &home, args.fix)?;
    endpoint(&mut report, &setup).await?;
    terminal_backend(&mut report, &setup).await?;
    local_model(&mut report, &setup)?;
    store(&mut report, &home)?;
    directories(&mut report, &home, args.fix)?;
    helpers(&mut report, &setup)?;
    summary(&mut report, args.fix)?;
    Ok(ExitCode::SUCCESS)
}

/// `.env` and config.yaml; returns the setup to check the rest with (defaults
/// when config.yaml cannot be read).
fn configuration<W: Write>(r: &mut Report<W>, home: &HermesHome, fix: bool) -> Result<Setup> {
    r.section("Configuration Files")?;
    let mut env = Env::from_pairs(std::env::vars());
    let env_file = home.env_file();
    if env_file.is_file() {
        match env.load_dotenv(&env_file) {
            Ok(_) => r.ok(&format!("{} exists", env_file.display()))?,
            Err(e) => r.fail(
                &format!("{} cannot be read: {e}", env_file.display()),
                &format!("Fix or remove the bad line in {}", env_file.display()),
            )?,
        }
    } else if fix {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::create_dir_all(home.root())?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&env_file)?;
        r.fixed += 1;
        r.ok(&format!("Created empty {}", env_file.display()))?;
    } else {
        r.warn(&format!(
            "{} not found (API keys go there)",
            env_file.display()
        ))?;
    }
    let config_file = home.config_file();
    let config = if config_file.is_file() {
        match Config::load(&config_file, &env) {
            Ok(config) => {
                r.ok(&format!("{} is valid", config_file.display()))?;
                config
            }
            Err(e) => {
                r.fail(
                    &format!("config.yaml cannot be used: {e}"),
                    &format!(
                        "Correct {} (hermes config edit), or move it aside to start from defaults",
                        config_file.display()
                    ),
                )?;
                Config::without_user_file(&env)
            }
        }
    } else {
        if fix {
            std::fs::create_dir_all(home.root())?;
            std::fs::write(
                &config_file,
                "# Hermes configuration (hermes config set KEY VALUE)\n",
            )?;
            r.fixed += 1;
            r.ok(&format!("Created {}", config_file.display()))?;
        } else {
            r.warn("config.yaml not found (using defaults)")?;
        }
        Config::without_user_file(&env)
    };
    let unknown: Vec<String> = config
        .toolsets_for("cli")
        .into_iter()
        .filter(|t| {
            hermes_tools::toolsets::find(t).is_none() && !t.starts_with("mcp-") && t != "no_mcp"
        })
        .collect();
    if !unknown.is_empty() {
        r.warn_fix(
            &format!("Unknown toolsets in config.yaml: {}", unknown.join(", ")),
            "Pick known toolsets with `hermes tools list` / `hermes tools enable NAME`",
        )?;
    }
    Ok(Setup {
        env,
        home: home.clone(),
        config,
    })
}

/// `terminal.backend`: the environment is built and a probe runs in it
/// (bwrap present, the SSH host reachable).
async fn terminal_backend<W: Write>(r: &mut Report<W>, setup: &Setup) -> Result<()> {
    r.section("Terminal Backend")?;
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"));
    match hermes_session::environment::prepare(setup, &cwd).await {
        Ok(place) => r.ok(&place.env.describe())?,
        Err(e) => r.fail(
            &e.to_string(),
            "Fix terminal.* in config.yaml (hermes config edit), or set terminal.backend: local",
        )?,
    }
    Ok(())
}

/// The provider, its key, and whether its endpoint answers.
async fn endpoint<W: Write>(r: &mut Report<W>, setup: &Setup) -> Result<()> {
    r.section("Model Provider")?;
    let ep = match setup.endpoint(None, None) {
        Ok(ep) => ep,
        Err(SetupError::NoProvider { .. }) => {
            if crate::status_cmd::local_model_file(setup).is_file() {
                r.ok("No provider configured: the embedded local model answers (offline)")?;
            } else {
                r.fail(
                    "No inference provider is configured and the local model is not downloaded",
                    "Run 'hermes setup' (or 'hermes model pull smollm2' for the offline model)",
                )?;
            }
            return Ok(());
        }
        Err(e @ SetupError::MissingKey { .. }) => {
            let text = e.to_string();
            r.fail(
                &text,
                "Run 'hermes setup', or 'hermes config set <VAR> <key>'",
            )?;
            return Ok(());
        }
        Err(e) => {
            r.fail(
                &e.to_string(),
                "Run 'hermes setup' or 'hermes model set PROVIDER:MODEL'",
            )?;
            return Ok(());
        }
    };
    let model = ep
        .model
        .clone()
        .unwrap_or_else(|| "(asked from the server)".into());
    r.ok(&format!("Provider {} · model {model}", ep.provider))?;
    if ep.provider == "local" || ep.base_url.is_empty() {
        return Ok(());
    }
    let provider = match Services::without_store(setup.clone()).remote(&ep) {
        Ok(p) => p,
        Err(e) => {
            r.fail(
                &format!("Cannot set up {}: {e}", ep.provider),
                "Check model.base_url in config.yaml",
            )?;
            return Ok(());
        }
    };
    match tokio::time::timeout(PROBE_TIMEOUT, provider.list_models()).await {
        Ok(Ok(_)) => r.ok(&format!("{} answers", ep.base_url))?,
        Ok(Err(e)) => {
            let text = hermes_llm::redact::redact_secrets(&format!("{e}"));
            let first = text.lines().next().unwrap_or("").to_owned();
            if matches!(e.status(), Some(401 | 403)) {
                r.fail(
                    &format!("{} refused the API key: {first}", ep.base_url),
                    &format!(
                        "Set a valid key: hermes config set {} <key>",
                        key_var(&ep.provider)
                    ),
                )?;
            } else if e.status().is_some() {
                // Some servers do not list models; they answered, which is what matters here.
                r.ok(&format!("{} answers ({first})", ep.base_url))?;
            } else {
                r.fail(
                    &format!("{} cannot be reached: {first}", ep.base_url),
                    "Start the server or correct model.base_url (hermes config set model.base_url URL)",
                )?;
            }
        }
        Err(_) => r.fail(
            &format!(
                "{} did not answer within {} s",
                ep.base_url,
                PROBE_TIMEOUT.as_secs()
            ),
            "Check the network, or correct model.base_url",
        )?,
    }
    Ok(())
}

/// The variable holding `provider`'s key.
fn key_var(provider: &str) -> String {
    hermes_llm::providers::find(provider)
        .and_then(|p| p.key_env.first().map(|v| (*v).to_owned()))
        .unwrap_or_else(|| "OPENAI_API_KEY".into())
}

fn local_model<W: Write>(r: &mut Report<W>, setup: &Setup) -> Result<()> {
    r.section("Local Model")?;
    if !cfg!(feature = "local") {
        r.warn("This build has no embedded model runtime")?;
        return Ok(());
    }
    let file = crate::status_cmd::local_model_file(setup);
    if file.is_file() {
        r.ok(&format!("{} present", file.display()))?;
    } else {
        r.warn("SmolLM2-135M not downloaded (the offline fallback)")?;
        r.info("Get it with: hermes model pull smollm2")?;
    }
    Ok(())
}

fn store<W: Write>(r: &mut Report<W>, home: &HermesHome) -> Result<()> {
    r.section("Session Store")?;
    let db = home.state_db();
    if !db.is_file() {
        r.ok("state.db not created yet (it will be on the first session)")?;
        return Ok(());
    }
    match hermes_state::session_db::SessionDb::check_file(&db) {
        None => {
            let count = hermes_state::session_db::SessionDb::open_read_only(&db)
                .ok()
                .and_then(|d| d.session_count().ok())
                .unwrap_or(0);
            r.ok(&format!("{} is healthy ({count} sessions)", db.display()))?;
        }
        Some(problem) => r.fail(
            &format!("{} is damaged: {problem}", db.display()),
            "Run 'hermes sessions repair' (it keeps a backup and your sessions)",
        )?,
    }
    Ok(())
}

fn directories<W: Write>(r: &mut Report<W>, home: &HermesHome, fix: bool) -> Result<()> {
    r.section("Directory Structure")?;
    if !home.root().is_dir() {
        if fix {
            std::fs::create_dir_all(home.root())?;
            r.fixed += 1;
        } else {
            r.warn(&format!(
                "{} does not exist yet (created on first use)",
                home.root().display()
            ))?;
            return Ok(());
        }
    }
    r.ok(&format!("{} exists", home.root().display()))?;
    for dir in [home.logs_dir(), home.skills_dir(), home.memories_dir()] {
        if dir.is_dir() {
            r.ok(&format!("{}/ exists", dir.display()))?;
        } else if fix {
            std::fs::create_dir_all(&dir)?;
            r.fixed += 1;
            r.ok(&format!("Created {}/", dir.display()))?;
        } else {
            r.warn(&format!(
                "{}/ not found (will be created on first use)",
                dir.display()
            ))?;
        }
    }
    Ok(())
}

/// Programs some tools need, each with what it enables and how to get it.
const HELPERS: &[(&str, &str, &str)] = &[
    ("python3", "execute_code", "sudo apt install python3"),
    (
        "node",
        "MCP servers run with npx",
        "sudo apt install nodejs npm",
    ),
    (
        "git",
        "repository work in the terminal tool",
        "sudo apt install git",
    ),
    ("rg", "faster search_files", "sudo apt install ripgrep"),
    (
        "pdftotext",
        "PDFs in web_extract",
        "sudo apt install poppler-utils",
    ),
    ("chromium", "browser tools", "sudo apt install chromium"),
];

fn helpers<W: Write>(r: &mut Report<W>, setup: &Setup) -> Result<()> {
    r.section("External Tools")?;
    for (program, enables, install) in HELPERS {
        match crate::status_cmd::on_path(program) {
            Some(_) => r.ok(&format!("{program} ({enables})"))?,
            None => {
                r.warn(&format!("{program} not found (optional: {enables})"))?;
                r.info(&format!("Install: {install}"))?;
            }
        }
    }
    if let Some(servers) = setup.config.get("mcp_servers").and_then(|v| v.as_object()) {
        for (name, server) in servers {
            let Some(command) = server.get("command").and_then(|c| c.as_str()) else {
                continue;
            };
            let found = command.contains('/') && std::path::Path::new(command).is_file()
                || crate::status_cmd::on_path(command).is_some();
            if found {
                r.ok(&format!("MCP server '{name}': {command} found"))?;
            } else {
                r.warn_fix(
                    &format!("MCP server '{name}': command '{command}' not found"),
                    &format!("Install {command}, or remove the server: hermes mcp remove {name}"),
                )?;
            }
        }
    }
    Ok(())
}

fn summary<W: Write>(r: &mut Report<W>, fix: bool) -> Result<()> {
    writeln!(r.out)?;
    writeln!(
        r.out,
        "────────────────────────────────────────────────────────────"
    )?;
    if fix && r.fixed > 0 {
        writeln!(r.out, "  Fixed {} issue(s).", r.fixed)?;
    }
    if r.fixes.is_empty() {
        writeln!(r.out, "  All checks passed! 🎉")?;
    } else {
        writeln!(r.out, "  Found {} issue(s) to address:\n", r.fixes.len())?;
        let fixes = std::mem::take(&mut r.fixes);
        for (i, fix) in fixes.iter().enumerate() {
            writeln!(r.out, "  {}. {fix}", i + 1)?;
        }
        if !fix {
            writeln!(
                r.out,
                "\n  Tip: run 'hermes doctor --fix' to create what is missing."
            )?;
        }
    }
    writeln!(r.out)?;
    Ok(())
}
