//! `hermes send`: a message from a shell script to a configured platform —
//! no model, no running gateway (the bot token is enough), as the
//! reference's. Exit 0 sent, 1 the platform refused, 2 a usage error.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use hermes_gateway::messaging::Deliverer;
use hermes_session::cron::deliver::{CronDelivery, targets};
use serde_json::json;

use crate::args::RunArgs;

/// `hermes send` arguments.
#[derive(Debug, Args)]
pub struct SendArgs {
    /// Where: `platform` (its home channel), `platform:chat_id` or `platform:chat_id:thread_id`.
    #[arg(short = 't', long = "to", value_name = "TARGET")]
    to: Option<String>,
    /// The text (else --file, else standard input); with --list, a platform to show.
    message: Option<String>,
    /// Read the text from PATH (`-`: standard input).
    #[arg(short = 'f', long = "file", value_name = "PATH")]
    file: Option<String>,
    /// A first line put before the text.
    #[arg(short = 's', long = "subject", value_name = "LINE")]
    subject: Option<String>,
    /// List the platforms that can be sent to, and their home channels.
    #[arg(short = 'l', long = "list")]
    list: bool,
    /// Print nothing on success (the exit status says it).
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

const USAGE: u8 = 2;

fn usage(message: &str) -> Result<ExitCode> {
    writeln!(std::io::stderr(), "hermes send: {message}")?;
    Ok(ExitCode::from(USAGE))
}

/// The message body: the argument, the file, or piped standard input.
fn body(args: &SendArgs) -> Result<Option<String>, String> {
    if let Some(text) = args.message.as_ref().filter(|t| !t.is_empty()) {
        return Ok(Some(text.clone()));
    }
    let mut text = String::new();
    match args.file.as_deref() {
        Some("-") => {
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
        }
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
            text = String::from_utf8(bytes).map_err(|_| {
                format!(
                    "{path} is not a text file: to send it as an attachment, put MEDIA:{path} in the message"
                )
            })?;
        }
        None if !std::io::stdin().is_terminal() => {
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
        }
        None => {}
    }
    Ok(Some(text).filter(|t| !t.trim().is_empty()))
}

/// Runs `hermes send`.
pub async fn run(args: SendArgs, flags: &RunArgs) -> Result<ExitCode> {
    let setup = crate::chat::load_setup(flags)?;
    let messaging = crate::gateway_cmd::messaging_config(&setup);
    let deliverer = match Deliverer::standalone(&messaging, setup.home.root()) {
        Ok(Some(deliverer)) => deliverer,
        Ok(None) => {
            return usage(
                "no messaging platform is configured: set TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN \
                 or SLACK_BOT_TOKEN in .env (hermes config set TELEGRAM_BOT_TOKEN …)",
            );
        }
        Err(e) => return usage(&e),
    };
    if args.list {
        return list(&deliverer, args.message.as_deref(), args.json);
    }
    let Some(to) = args.to.as_deref().map(str::trim).filter(|t| !t.is_empty()) else {
        return usage(
            "say where with --to platform[:chat_id[:thread_id]] (hermes send --list shows them)",
        );
    };
    let text = match body(&args) {
        Ok(Some(text)) => text,
        Ok(None) => return usage("nothing to send: give the text, --file PATH, or pipe it in"),
        Err(e) => return usage(&e),
    };
    let text = match &args.subject {
        Some(subject) => format!("{subject}\n\n{text}"),
        None => text,
    };
    let found = match targets(&json!({"deliver": to}), Some(&deliverer)) {
        Ok(found) if !found.is_empty() => found,
        Ok(_) => return usage(&format!("'{to}' names no chat")),
        Err(e) => return usage(&e),
    };
    let mut failed = None;
    for target in &found {
        if let Err(e) = deliverer.send(target, &text).await {
            failed = Some(hermes_llm::redact::redact_secrets(&e));
            break;
        }
    }
    let target = &found[0];
    let mut out = std::io::stdout().lock();
    if args.json {
        let result = match &failed {
            None => json!({"success": true, "platform": target.platform,
                           "chat_id": target.chat_id, "thread_id": target.thread_id}),
            Some(e) => json!({"error": e}),
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&result)?)?;
    } else if let Some(e) = &failed {
        writeln!(std::io::stderr(), "hermes send: {e}")?;
    } else if !args.quiet {
        writeln!(out, "sent")?;
    }
    Ok(if failed.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn list(deliverer: &Deliverer, only: Option<&str>, json_mode: bool) -> Result<ExitCode> {
    let mut platforms = deliverer.platforms();
    if let Some(only) = only {
        platforms.retain(|p| p.eq_ignore_ascii_case(only));
        if platforms.is_empty() {
            return usage(&format!(
                "no targets found for platform '{only}'. Configured: {}",
                deliverer.platforms().join(", ")
            ));
        }
    }
    let mut out = std::io::stdout().lock();
    if json_mode {
        let listed: serde_json::Map<String, serde_json::Value> = platforms
            .iter()
            .map(|p| {
                let home = deliverer
                    .home(p)
                    .map(|t| json!({"chat_id": t.chat_id, "thread_id": t.thread_id}));
                (p.clone(), json!({"home": home}))
            })
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&json!({"platforms": listed}))?
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    for platform in platforms {
        match deliverer.home(&platform) {
            Some(home) => writeln!(
                out,
                "{platform}  (home: {platform}:{}{})",
                home.chat_id,
                home.thread_id.map_or_else(String::new, |t| format!(":{t}"))
            )?,
            None => writeln!(
                out,
                "{platform}  (no home channel: send to {platform}:CHAT_ID, or set {}_HOME_CHANNEL)",
                platform.to_ascii_uppercase()
            )?,
        }
    }
    Ok(ExitCode::SUCCESS)
}
