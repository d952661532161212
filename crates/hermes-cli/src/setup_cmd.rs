//! `hermes setup`: the first-run flow. It asks how Hermes should answer (the
//! offline local model, a provider and its key, or any OpenAI-compatible
//! endpoint) and writes the answer to config.yaml and `.env`, editing them in
//! place. Without a terminal it says which commands do the same.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use hermes_state::HermesHome;
use serde_json::Value;

/// `hermes setup` arguments.
#[derive(Debug, Args)]
pub struct SetupArgs {
    /// Print what to run instead of asking (as without a terminal).
    #[arg(long)]
    non_interactive: bool,
}

/// A provider the wizard offers: (menu label, provider id, key variable,
/// where to get a key, default model).
const PROVIDERS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "OpenRouter — one key, hundreds of models",
        "openrouter",
        "OPENROUTER_API_KEY",
        "https://openrouter.ai/keys",
        "anthropic/claude-sonnet-4.5",
    ),
    (
        "OpenAI",
        "openai",
        "OPENAI_API_KEY",
        "https://platform.openai.com/api-keys",
        "gpt-5-mini",
    ),
    (
        "Anthropic",
        "anthropic",
        "ANTHROPIC_API_KEY",
        "https://console.anthropic.com/settings/keys",
        "claude-sonnet-4-5",
    ),
];

/// What to run when nobody can answer questions.
pub(crate) fn guidance(out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "\n⚕ Hermes Setup — Non-interactive mode\n")?;
    writeln!(
        out,
        "  No terminal to ask questions on. Configure Hermes with commands instead:"
    )?;
    writeln!(
        out,
        "    hermes model pull smollm2            # the offline local model, no key"
    )?;
    writeln!(out, "  or a provider key:")?;
    writeln!(out, "    hermes config set OPENROUTER_API_KEY sk-or-...")?;
    writeln!(
        out,
        "    hermes config set model.default anthropic/claude-sonnet-4.5"
    )?;
    writeln!(out, "  or any OpenAI-compatible server:")?;
    writeln!(out, "    hermes config set model.provider custom")?;
    writeln!(
        out,
        "    hermes config set model.base_url http://localhost:8080/v1"
    )?;
    writeln!(out, "    hermes config set model.default your-model-name")?;
    writeln!(
        out,
        "\n  Run 'hermes setup' in a terminal for the guided version.\n"
    )
}

/// Whether the wizard can ask questions here.
pub(crate) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// Runs `hermes setup`.
pub fn run(args: &SetupArgs) -> Result<ExitCode> {
    let home = crate::chat::home()?;
    if args.non_interactive || !interactive() {
        guidance(&mut std::io::stdout().lock())?;
        return Ok(ExitCode::SUCCESS);
    }
    Ok(if wizard(&home)? {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// One answer typed on the terminal (`None` at end of input).
fn ask(prompt: &str) -> Result<Option<String>> {
    let mut out = std::io::stdout().lock();
    write!(out, "{prompt}")?;
    out.flush()?;
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim().to_owned()))
}

/// An answer typed without echo (API keys).
fn ask_secret(prompt: &str) -> Result<Option<String>> {
    use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let saved = tcgetattr(&stdin).ok();
    if let Some(original) = &saved {
        let mut quiet = original.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        let _ = tcsetattr(&stdin, SetArg::TCSANOW, &quiet);
    }
    let answer = ask(prompt);
    if let Some(original) = &saved {
        let _ = tcsetattr(&stdin, SetArg::TCSANOW, original);
    }
    writeln!(std::io::stdout())?;
    answer
}

/// The guided flow; returns whether something was configured.
pub(crate) fn wizard(home: &HermesHome) -> Result<bool> {
    let mut out = std::io::stdout().lock();
    writeln!(out)?;
    writeln!(
        out,
        "┌─────────────────────────────────────────────────────────┐"
    )?;
    writeln!(
        out,
        "│               ⚕ Hermes Agent Setup Wizard               │"
    )?;
    writeln!(
        out,
        "└─────────────────────────────────────────────────────────┘"
    )?;
    writeln!(out, "  Settings go to {}", home.config_file().display())?;
    writeln!(out, "  Keys go to     {}\n", home.env_file().display())?;
    writeln!(out, "  How should Hermes answer?")?;
    writeln!(
        out,
        "    1. Local model — offline, no key: SmolLM2-135M (~98 MB download).\n       \
         Fine for short questions; too small to use tools reliably."
    )?;
    for (i, (label, ..)) in PROVIDERS.iter().enumerate() {
        writeln!(out, "    {}. {label}", i + 2)?;
    }
    let custom = PROVIDERS.len() + 2;
    writeln!(
        out,
        "    {custom}. Custom OpenAI-compatible endpoint (Ollama, llama.cpp, vLLM, LM Studio …)"
    )?;
    drop(out);
    let Some(choice) = ask("  Choice [default 1]: ")? else {
        return cancelled();
    };
    let choice: usize = if choice.is_empty() {
        1
    } else {
        match choice.parse() {
            Ok(n) if (1..=custom).contains(&n) => n,
            _ => {
                writeln!(std::io::stdout(), "  '{choice}' is not one of the choices.")?;
                return cancelled();
            }
        }
    };
    let done = match choice {
        1 => local(home)?,
        n if n == custom => endpoint(home)?,
        n => provider(home, PROVIDERS[n - 2])?,
    };
    if !done {
        return cancelled();
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "\n  ✓ Setup complete. Try:  hermes chat -q \"hello\"")?;
    writeln!(out, "    Check everything with: hermes doctor\n")?;
    Ok(true)
}

fn cancelled() -> Result<bool> {
    writeln!(
        std::io::stdout(),
        "\n  Nothing changed. You can run 'hermes setup' at any time."
    )?;
    Ok(false)
}

fn set(home: &HermesHome, key: &str, value: &str) -> Result<()> {
    crate::config_cmd::write_key(home, key, Some(Value::String(value.to_owned())))
}

fn local(home: &HermesHome) -> Result<bool> {
    let python = std::env::var("HERMES_PYTHON").unwrap_or_else(|_| "python3".into());
    match crate::model_cmd::pull_default_model(home, &python) {
        Ok(path) => {
            set(home, "model.provider", "local")?;
            writeln!(
                std::io::stdout(),
                "  ✓ Local model ready: {}",
                path.display()
            )?;
            Ok(true)
        }
        Err(e) => {
            writeln!(std::io::stdout(), "  ✗ {e:#}")?;
            Ok(false)
        }
    }
}

fn provider(home: &HermesHome, spec: (&str, &str, &str, &str, &str)) -> Result<bool> {
    let (_, id, var, url, default_model) = spec;
    writeln!(std::io::stdout(), "  Get a key at: {url}")?;
    let Some(key) = ask_secret(&format!("  {var} (input hidden, Enter to cancel): "))? else {
        return Ok(false);
    };
    if key.is_empty() {
        return Ok(false);
    }
    hermes_state::env_file::set_var(&home.env_file(), var, Some(&key))?;
    writeln!(
        std::io::stdout(),
        "  ✓ Key saved to {}",
        home.env_file().display()
    )?;
    let model = ask(&format!("  Model [default {default_model}]: "))?.unwrap_or_default();
    let model = if model.is_empty() {
        default_model.to_owned()
    } else {
        model
    };
    set(home, "model.provider", id)?;
    set(home, "model.default", &model)?;
    writeln!(
        std::io::stdout(),
        "  ✓ Default model set to: {model} (via {id})"
    )?;
    Ok(true)
}

fn endpoint(home: &HermesHome) -> Result<bool> {
    let Some(url) = ask("  API base URL [e.g. http://localhost:8080/v1]: ")? else {
        return Ok(false);
    };
    if url.is_empty() {
        return Ok(false);
    }
    let key = ask_secret("  API key [optional, input hidden]: ")?.unwrap_or_default();
    let model = ask("  Model name [Enter to ask the server]: ")?.unwrap_or_default();
    set(home, "model.provider", "custom")?;
    set(home, "model.base_url", url.trim_end_matches('/'))?;
    if !key.is_empty() {
        // As the reference: a custom endpoint's key lives with its URL.
        set(home, "model.api_key", &key)?;
    }
    if model.is_empty() {
        crate::config_cmd::write_key(home, "model.default", None)?;
    } else {
        set(home, "model.default", &model)?;
    }
    writeln!(std::io::stdout(), "  ✓ Endpoint set: {url}")?;
    Ok(true)
}
