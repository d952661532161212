//! `hermes webhook subscribe|list|remove|test`: the routes the gateway's
//! webhook listener serves, kept in `webhook_subscriptions.json` as the
//! reference keeps them. Errors exit 1 (the reference exits 0 after
//! printing them, which scripts cannot tell from success).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use hermes_gateway::webhook::routes::{
    Deliver, Route, Subscriptions, WebhookConfig, new_secret, route_name,
};
use hermes_session::Setup;
use serde_json::{Map, Value, json};

/// `hermes webhook` arguments.
#[derive(Debug, Args)]
pub struct WebhookArgs {
    #[command(subcommand)]
    action: Option<WebhookAction>,
}

#[derive(Debug, Subcommand)]
enum WebhookAction {
    /// Create (or replace) a route: POSTs to /webhooks/NAME run the agent.
    #[command(visible_alias = "add")]
    Subscribe(SubscribeArgs),
    /// The routes made with subscribe.
    #[command(visible_alias = "ls")]
    List,
    /// Delete a route made with subscribe.
    #[command(visible_alias = "rm")]
    Remove {
        /// The route's name.
        name: String,
    },
    /// Send a signed test event to a route of the running gateway.
    Test {
        /// The route's name.
        name: String,
        /// The JSON body to send (default: a small test event).
        #[arg(long, default_value = "")]
        payload: String,
    },
}

/// `hermes webhook subscribe` arguments.
#[derive(Debug, Args)]
struct SubscribeArgs {
    /// Route name (used in the URL: /webhooks/<name>).
    name: String,
    /// Prompt template; `{dot.path}` reads the JSON body, `{__raw__}` is all of it.
    #[arg(long, default_value = "")]
    prompt: String,
    /// Comma-separated event types to take (default: all).
    #[arg(long, default_value = "")]
    events: String,
    /// What the route is for.
    #[arg(long, default_value = "")]
    description: String,
    /// Comma-separated skills to load for the run.
    #[arg(long, default_value = "")]
    skills: String,
    /// Where the answer goes: log, http (back in the HTTP reply) or a platform (telegram, discord, slack).
    #[arg(long, default_value = "log")]
    deliver: String,
    /// The chat to deliver to (default: the platform's home channel).
    #[arg(long, default_value = "")]
    deliver_chat_id: String,
    /// HMAC secret (default: a new random one).
    #[arg(long, default_value = "")]
    secret: String,
    /// Send the rendered prompt itself to the target, without the agent.
    #[arg(long)]
    deliver_only: bool,
    /// A script that filters or reshapes events (not carried out by hermes-rs yet).
    #[arg(long, default_value = "")]
    script: String,
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn env_of(setup: &Setup) -> impl Fn(&str) -> Option<String> + '_ {
    |k: &str| setup.env.get(k).map(str::to_owned)
}

/// Runs a `hermes webhook` action.
pub async fn run(args: WebhookArgs, setup: &Setup) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let Some(action) = args.action else {
        writeln!(out, "Usage: hermes webhook {{subscribe|list|remove|test}}")?;
        writeln!(out, "Run 'hermes webhook --help' for details.")?;
        return Ok(ExitCode::SUCCESS);
    };
    let env = env_of(setup);
    let Some(config) = WebhookConfig::read(&setup.config.raw, &env) else {
        drop(out);
        eprintln!(
            "The webhook platform is not enabled. Enable it in {}:\n\n  platforms:\n    webhook:\n      enabled: true\n      extra:\n        port: 8644\n\n(or WEBHOOK_ENABLED=true in .env), then run `hermes gateway run`.",
            setup.home.root().join("config.yaml").display()
        );
        return Ok(ExitCode::FAILURE);
    };
    let subs = Subscriptions::in_home(setup.home.root());
    match action {
        WebhookAction::Subscribe(a) => subscribe(&a, setup, &subs, &mut out),
        WebhookAction::List => list(setup, &subs, &mut out),
        WebhookAction::Remove { name } => remove(&name, &subs, &mut out),
        WebhookAction::Test { name, payload } => {
            drop(out);
            test(&name, &payload, setup, &config, &subs).await
        }
    }
}

fn subscribe(
    a: &SubscribeArgs,
    setup: &Setup,
    subs: &Subscriptions,
    out: &mut impl Write,
) -> Result<ExitCode> {
    let Some(name) = route_name(&a.name) else {
        eprintln!(
            "Error: Invalid name '{}'. Use lowercase alphanumeric with hyphens/underscores.",
            a.name.trim()
        );
        return Ok(ExitCode::FAILURE);
    };
    let deliver = match Deliver::parse(&a.deliver) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("Error: {e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    if a.deliver_only && deliver == Deliver::Log {
        eprintln!(
            "Error: --deliver-only requires --deliver to be a real target (telegram, discord, slack, etc.) — not 'log'."
        );
        return Ok(ExitCode::FAILURE);
    }
    if a.deliver_only && deliver == Deliver::Http {
        eprintln!(
            "Error: --deliver-only sends the message to a chat; 'http' has no agent answer to return."
        );
        return Ok(ExitCode::FAILURE);
    }
    if !a.script.trim().is_empty() {
        eprintln!(
            "Error: --script is not carried out by hermes-rs yet; a route with one would answer 501."
        );
        return Ok(ExitCode::FAILURE);
    }
    let mut entries = subs.entries();
    let existed = entries.contains_key(&name);
    let mut deliver_extra = Map::new();
    if !a.deliver_chat_id.trim().is_empty() {
        deliver_extra.insert("chat_id".into(), json!(a.deliver_chat_id.trim()));
    }
    let route = Route {
        name: name.clone(),
        description: if a.description.trim().is_empty() {
            format!("Agent-created subscription: {name}")
        } else {
            a.description.clone()
        },
        events: split_list(&a.events),
        secret: if a.secret.is_empty() {
            new_secret()
        } else {
            a.secret.clone()
        },
        prompt: a.prompt.clone(),
        skills: split_list(&a.skills),
        deliver: deliver.name().to_owned(),
        deliver_extra,
        deliver_only: a.deliver_only,
        enabled: true,
        unsupported: None,
        created_at: Some(created_at()),
        dynamic: true,
    };
    entries.insert(name.clone(), route.to_json());
    subs.save(&entries)?;
    let url = format!(
        "{}/webhooks/{name}",
        WebhookConfig::base_url(&setup.config.raw)
    );
    writeln!(
        out,
        "\n  {} webhook subscription: {name}",
        if existed { "Updated" } else { "Created" }
    )?;
    writeln!(out, "  URL:    {url}")?;
    writeln!(out, "  Secret: {}", route.secret)?;
    writeln!(out, "  Events: {}", events_text(&route.events))?;
    writeln!(out, "  Deliver: {}", route.deliver)?;
    if route.deliver_only {
        writeln!(out, "  Mode: direct delivery (no agent, zero LLM cost)")?;
    }
    if !route.prompt.is_empty() {
        let head: String = route.prompt.chars().take(80).collect();
        let label = if route.deliver_only {
            "Message"
        } else {
            "Prompt"
        };
        writeln!(out, "  {label}: {head}...")?;
    }
    writeln!(
        out,
        "\n  Configure your service to POST to the URL above.\n  Use the secret for HMAC-SHA256 signature validation (X-Hub-Signature-256: sha256=<hex>).\n  The gateway must be running to receive events (hermes gateway run).\n"
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Now, as the reference stamps subscriptions (`2026-11-28T09:30:00Z`).
fn created_at() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    format!("{}Z", hermes_state::time::UtcTime::from_unix(now).iso())
}

fn events_text(events: &[String]) -> String {
    if events.is_empty() {
        "(all)".to_owned()
    } else {
        events.join(", ")
    }
}

fn list(setup: &Setup, subs: &Subscriptions, out: &mut impl Write) -> Result<ExitCode> {
    let routes = subs.load();
    if routes.is_empty() {
        writeln!(out, "  No dynamic webhook subscriptions.")?;
        writeln!(out, "  Create one with: hermes webhook subscribe <name>")?;
        return Ok(ExitCode::SUCCESS);
    }
    let base = WebhookConfig::base_url(&setup.config.raw);
    writeln!(out, "\n  {} webhook subscription(s):\n", routes.len())?;
    for route in routes.values() {
        writeln!(out, "  ◆ {}", route.name)?;
        if !route.description.is_empty() {
            writeln!(out, "    {}", route.description)?;
        }
        writeln!(out, "    URL:     {base}/webhooks/{}", route.name)?;
        writeln!(out, "    Events:  {}", events_text(&route.events))?;
        let direct = if route.deliver_only {
            " (direct — no agent)"
        } else {
            ""
        };
        writeln!(out, "    Deliver: {}{direct}", route.deliver)?;
        if let Some(option) = route.unsupported {
            writeln!(
                out,
                "    ⚠ uses '{option}', which hermes-rs does not carry out: it answers 501"
            )?;
        }
        writeln!(out)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn remove(name: &str, subs: &Subscriptions, out: &mut impl Write) -> Result<ExitCode> {
    let name = name.trim().to_lowercase();
    let mut entries = subs.entries();
    if entries.shift_remove(&name).is_none() {
        writeln!(out, "  No subscription named '{name}'.")?;
        writeln!(
            out,
            "  Note: Static routes from config.yaml cannot be removed here."
        )?;
        return Ok(ExitCode::FAILURE);
    }
    subs.save(&entries)?;
    writeln!(out, "  Removed webhook subscription: {name}")?;
    Ok(ExitCode::SUCCESS)
}

async fn test(
    name: &str,
    payload: &str,
    setup: &Setup,
    config: &WebhookConfig,
    subs: &Subscriptions,
) -> Result<ExitCode> {
    let name = name.trim().to_lowercase();
    let route = config
        .routes
        .get(&name)
        .cloned()
        .or_else(|| subs.load().remove(&name));
    let Some(route) = route else {
        eprintln!("  No route named '{name}': see `hermes webhook list`.");
        return Ok(ExitCode::FAILURE);
    };
    let body = if payload.trim().is_empty() {
        json!({"test": true, "event_type": "test", "message": "Hello from hermes webhook test"})
            .to_string()
    } else {
        if serde_json::from_str::<Value>(payload).is_err() {
            eprintln!("  Error: --payload is not JSON");
            return Ok(ExitCode::FAILURE);
        }
        payload.to_owned()
    };
    let url = format!(
        "{}/webhooks/{name}",
        WebhookConfig::base_url(&setup.config.raw)
    );
    println!("  Sending test POST to {url}");
    let sent = hermes_gateway::webhook::send_test(&url, config.secret_of(&route), body).await;
    match sent {
        Ok((status, text)) => {
            println!("  Response ({status}): {text}");
            Ok(if status < 300 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Err(e) => {
            println!("  Error: {e}");
            println!("  Is the gateway running? (hermes gateway run)");
            Ok(ExitCode::FAILURE)
        }
    }
}
