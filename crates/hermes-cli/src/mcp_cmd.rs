//! `hermes mcp`: add, list, remove and test MCP servers in config.yaml, and
//! `hermes mcp serve` (Hermes as an MCP server over stdio).

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use hermes_mcp::{Link, McpConfig, McpHub, ServerConfig, TransportConfig};
use hermes_session::Setup;
use hermes_state::config_edit::{Entry, update_config_entries};
use serde_json::{Map, Value, json};

use crate::args::RunArgs;

/// `hermes mcp` arguments.
#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    action: Option<McpAction>,
}

#[derive(Debug, Subcommand)]
enum McpAction {
    /// Run Hermes as an MCP server (expose conversations to other agents) on
    /// stdio, or over Streamable HTTP with --http.
    Serve {
        /// Enable verbose logging on stderr.
        #[arg(short, long)]
        verbose: bool,
        #[command(flatten)]
        http: ServeHttp,
    },
    /// Authorize Hermes with an OAuth-protected server (opens the browser).
    #[command(alias = "reauth")]
    Login {
        /// Server name (configured with `auth: oauth`).
        name: String,
    },
    /// Forget a server's OAuth tokens and client registration.
    Logout {
        /// Server name.
        name: String,
    },
    /// Add an MCP server: connects, lists its tools, then saves it to config.yaml.
    Add {
        /// Server name (used as config key).
        name: String,
        #[command(flatten)]
        server: NewServer,
    },
    /// Remove an MCP server from config.yaml.
    #[command(alias = "rm")]
    Remove {
        /// Server name to remove.
        name: String,
    },
    /// List configured MCP servers.
    #[command(alias = "ls")]
    List,
    /// Connect to a configured server and list its tools with their schema size.
    Test {
        /// Server name to test.
        name: String,
    },
}

/// Runs a `hermes mcp` action.
pub async fn run(args: McpArgs, run: &RunArgs) -> Result<ExitCode> {
    let setup = crate::chat::load_setup(run)?;
    match args.action.unwrap_or(McpAction::List) {
        McpAction::Serve { verbose, http } => serve(&setup, verbose, http).await,
        McpAction::Login { name } => crate::mcp_oauth::login(&setup, &name).await,
        McpAction::Logout { name } => Ok(crate::mcp_oauth::logout(&setup, &name)),
        McpAction::List => {
            list(&setup);
            Ok(ExitCode::SUCCESS)
        }
        McpAction::Remove { name } => remove(&setup, &name),
        McpAction::Test { name } => test(&setup, &name).await,
        McpAction::Add { name, server } => {
            let entry = new_entry(server)?;
            add(&setup, &name, entry).await
        }
    }
}

pub(crate) fn out(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
}

pub(crate) fn ok(text: &str) {
    out(&format!("  ✓ {text}"));
}

pub(crate) fn info(text: &str) {
    out(&format!("  {text}"));
}

pub(crate) fn problem(text: &str) {
    out(&format!("  ✗ {text}"));
}

fn servers_section(setup: &Setup) -> Map<String, Value> {
    setup
        .config
        .raw
        .get("mcp_servers")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

pub(crate) fn mcp_config(setup: &Setup) -> McpConfig {
    hermes_session::mcp::config_of(setup)
}

/// Asks a yes/no question on a terminal; elsewhere the default answers.
fn confirm(question: &str, default: bool) -> bool {
    if !std::io::stdin().is_terminal() {
        return default;
    }
    let hint = if default { "[Y/n]" } else { "[y/N]" };
    {
        let mut stdout = std::io::stdout().lock();
        let _ = write!(stdout, "  {question} {hint}: ");
        let _ = stdout.flush();
    }
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return default;
    }
    match line.trim().to_ascii_lowercase().as_str() {
        "" => default,
        "y" | "yes" => true,
        _ => false,
    }
}

/// Asks for a line on a terminal; `None` elsewhere (the default answers).
fn ask_line(question: &str) -> Option<String> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    {
        let mut stdout = std::io::stdout().lock();
        let _ = write!(stdout, "  {question}");
        let _ = stdout.flush();
    }
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok()?;
    Some(line.trim().to_owned())
}

/// The numbered tools, then which to enable (`1 3`, `2-4`, names; empty: all);
/// `None` when none is chosen.
fn select_tools(names: &[&str]) -> Option<Vec<String>> {
    out("");
    for (n, name) in names.iter().enumerate() {
        out(&format!("    {:>3}. {name}", n + 1));
    }
    out("");
    loop {
        let answer = ask_line("Tools to enable (numbers, ranges like 2-4 or names; empty: all): ")?;
        match parse_selection(&answer, names) {
            Ok(chosen) if chosen.is_empty() => return None,
            Ok(chosen) => return Some(chosen),
            Err(why) => problem(&why),
        }
    }
}

/// `answer` as tool names, in the listing's order; empty means every tool.
fn parse_selection(answer: &str, names: &[&str]) -> Result<Vec<String>, String> {
    if answer.trim().is_empty() {
        return Ok(names.iter().map(|n| (*n).to_owned()).collect());
    }
    let mut picked = vec![false; names.len()];
    let number = |word: &str| -> Result<usize, String> {
        word.parse::<usize>()
            .ok()
            .filter(|n| (1..=names.len()).contains(n))
            .ok_or_else(|| format!("'{word}' is not one of 1-{}", names.len()))
    };
    for word in answer.split([',', ' ']).filter(|w| !w.is_empty()) {
        if let Some(i) = names.iter().position(|n| *n == word) {
            picked[i] = true;
        } else if let Some((from, to)) = word.split_once('-') {
            let (from, to) = (number(from)?, number(to)?);
            for flag in &mut picked[from.min(to) - 1..from.max(to)] {
                *flag = true;
            }
        } else {
            picked[number(word)? - 1] = true;
        }
    }
    Ok(names
        .iter()
        .zip(&picked)
        .filter(|(_, on)| **on)
        .map(|(n, _)| (*n).to_owned())
        .collect())
}

/// Where a new server is and how to start it (`hermes mcp add` flags).
#[derive(Debug, Args)]
struct NewServer {
    /// HTTP endpoint URL (Streamable HTTP, or legacy SSE with --transport sse).
    #[arg(long)]
    url: Option<String>,
    /// Stdio command (e.g. npx).
    #[arg(long = "command", value_name = "CMD")]
    command: Option<String>,
    /// Arguments for the stdio command; must be the last option.
    #[arg(long, num_args = 1.., allow_hyphen_values = true)]
    args: Vec<String>,
    /// HTTP transport: `http` (Streamable HTTP, the default) or `sse` (legacy).
    #[arg(long, value_parser = ["http", "sse"])]
    transport: Option<String>,
    /// Timeout in seconds for the initial connection and tool discovery.
    #[arg(long = "connect-timeout")]
    connect_timeout: Option<f64>,
    /// Environment variables for stdio servers (KEY=VALUE).
    #[arg(long, num_args = 0..)]
    env: Vec<String>,
    /// HTTP headers for URL servers (`Name: value`).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// How Hermes authenticates with a URL server: `oauth` (a browser login,
    /// tokens kept under HERMES_HOME) or `header` (give --header).
    #[arg(long, value_parser = ["oauth", "header"])]
    auth: Option<String>,
}

/// `hermes mcp serve --http` options.
#[derive(Debug, Args)]
struct ServeHttp {
    /// Serve over Streamable HTTP (at /mcp) instead of stdio.
    #[arg(long)]
    http: bool,
    /// Address to listen on (off loopback a bearer token is required).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on.
    #[arg(long, default_value_t = 8765)]
    port: u16,
}

/// The config entry `hermes mcp add` writes.
fn new_entry(new: NewServer) -> Result<Map<String, Value>> {
    let mut entry = Map::new();
    match (new.url, new.command) {
        (Some(_), Some(_)) => bail!("give either --url or --command, not both"),
        (None, None) => bail!(
            "Must specify --url <endpoint> or --command <cmd>\n  Examples:\n    hermes mcp add ink --url \"https://mcp.ml.ink/mcp\"\n    hermes mcp add github --command npx --args @modelcontextprotocol/server-github"
        ),
        (Some(url), None) => {
            if !new.env.is_empty() {
                bail!("--env is only supported for stdio MCP servers (--command)");
            }
            entry.insert("url".into(), json!(url));
            if new.transport.as_deref() == Some("sse") {
                entry.insert("transport".into(), json!("sse"));
            }
            let mut headers = Map::new();
            for h in &new.headers {
                let Some((k, v)) = h.split_once(':') else {
                    bail!("--header must look like 'Name: value' (got {h:?})");
                };
                headers.insert(k.trim().to_owned(), json!(v.trim()));
            }
            if !headers.is_empty() {
                entry.insert("headers".into(), Value::Object(headers));
            }
            if new.auth.as_deref() == Some("oauth") {
                entry.insert("auth".into(), json!("oauth"));
            }
        }
        (None, Some(command)) => {
            if new.auth.is_some() {
                bail!("--auth is only for URL servers (--url)");
            }
            entry.insert("command".into(), json!(command));
            let args: Vec<&String> = new.args.iter().skip_while(|a| *a == "--").collect();
            if !args.is_empty() {
                entry.insert("args".into(), json!(args));
            }
            let mut env = Map::new();
            for pair in &new.env {
                let Some((k, v)) = pair.split_once('=') else {
                    bail!("--env takes KEY=VALUE pairs (got {pair:?})");
                };
                if k.trim().is_empty() {
                    bail!("--env takes KEY=VALUE pairs (got {pair:?})");
                }
                env.insert(k.trim().to_owned(), json!(v));
            }
            if !env.is_empty() {
                entry.insert("env".into(), Value::Object(env));
            }
        }
    }
    if let Some(t) = new.connect_timeout {
        entry.insert("connect_timeout".into(), json!(t));
    }
    Ok(entry)
}

fn save(setup: &Setup, name: &str, entry: Option<&Value>) -> Result<()> {
    update_config_entries(
        &setup.home.config_file(),
        "mcp_servers",
        &[(name, entry.map(Entry::Tree))],
    )?;
    Ok(())
}

/// What a probe found: `(name, description, schema bytes)` per tool.
pub(crate) struct Probe {
    pub(crate) tools: Vec<(String, String, usize)>,
    server_info: String,
    elapsed: Duration,
}

/// Connects to one server (its own connect_timeout) and lists its tools.
pub(crate) async fn probe(setup: &Setup, server: &ServerConfig) -> Result<Probe, String> {
    let mut server = server.clone();
    server.enabled = true;
    let config = McpConfig {
        servers: vec![server.clone()],
        discovery_timeout: server.connect_timeout,
        problems: Vec::new(),
    };
    let started = Instant::now();
    let mut options = hermes_session::mcp::hub_options(setup);
    let person = crate::mcp_oauth::person_present(false, setup);
    if person {
        options.oauth_prompt = Some(std::sync::Arc::new(crate::mcp_oauth::BrowserPrompt));
    }
    let login_wait = match &server.oauth {
        Some(oauth) if person => oauth.timeout,
        _ => Duration::ZERO,
    };
    let hub = McpHub::start(&config, options);
    hub.wait_settled(server.connect_timeout + login_wait + Duration::from_secs(1))
        .await;
    let elapsed = started.elapsed();
    let result = match hub.servers_link(&server.name) {
        Link::Ready(live) => Ok(Probe {
            tools: live
                .tools
                .iter()
                .map(|t| {
                    (
                        t.name.clone(),
                        t.description.clone(),
                        t.input_schema.to_string().len(),
                    )
                })
                .collect(),
            server_info: live.server_info.clone(),
            elapsed,
        }),
        Link::Down(why) => Err(why),
        Link::Connecting => Err("still connecting".into()),
    };
    hub.shutdown();
    result
}

fn short(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    if first.chars().count() > max {
        format!("{}...", first.chars().take(max).collect::<String>())
    } else {
        first.to_owned()
    }
}

async fn add(setup: &Setup, name: &str, entry: Map<String, Value>) -> Result<ExitCode> {
    if servers_section(setup).contains_key(name)
        && !confirm(
            &format!("Server '{name}' already exists. Overwrite?"),
            false,
        )
    {
        info("Cancelled.");
        return Ok(ExitCode::FAILURE);
    }
    let server =
        ServerConfig::parse(name, &Value::Object(entry.clone())).map_err(anyhow::Error::msg)?;
    out("");
    out(&format!("  Connecting to '{name}'..."));
    let found = match probe(setup, &server).await {
        Ok(found) => found,
        Err(why) => {
            problem(&format!("Failed to connect: {why}"));
            if confirm("Save config anyway (you can test later)?", false) {
                let mut disabled = entry;
                disabled.insert("enabled".into(), json!(false));
                save(setup, name, Some(&Value::Object(disabled)))?;
                ok(&format!("Saved '{name}' to config (disabled)"));
                info(&format!("Fix the issue, then: hermes mcp test {name}"));
            }
            return Ok(ExitCode::FAILURE);
        }
    };
    out("");
    ok(&format!(
        "Connected! Found {} tool(s) from '{name}':",
        found.tools.len()
    ));
    out("");
    for (tool, description, _) in &found.tools {
        out(&format!("    {tool:40} {}", short(description, 60)));
    }
    out("");
    let total = found.tools.len();
    let names: Vec<&str> = found.tools.iter().map(|(t, _, _)| t.as_str()).collect();
    let mut entry = entry;
    let enabled = match ask_line(&format!("Enable all {total} tools? [Y/n/select]: "))
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("" | "y" | "yes") => total,
        Some("s" | "select") => {
            let Some(chosen) = select_tools(&names) else {
                info("No tools selected — server not saved.");
                return Ok(ExitCode::FAILURE);
            };
            let count = chosen.len();
            entry.insert("tools".into(), json!({ "include": chosen }));
            count
        }
        Some(_) => {
            info("Cancelled — server not saved.");
            return Ok(ExitCode::FAILURE);
        }
    };
    entry.insert("enabled".into(), json!(true));
    save(setup, name, Some(&Value::Object(entry)))?;
    out("");
    ok(&format!(
        "Saved '{name}' to {} ({enabled}/{total} tools enabled)",
        setup.home.config_file().display()
    ));
    info("Start a new session to use these tools.");
    Ok(ExitCode::SUCCESS)
}

fn remove(setup: &Setup, name: &str) -> Result<ExitCode> {
    let servers = servers_section(setup);
    if !servers.contains_key(name) {
        problem(&format!("Server '{name}' not found in config."));
        if !servers.is_empty() {
            let names: Vec<&str> = servers.keys().map(String::as_str).collect();
            info(&format!("Available servers: {}", names.join(", ")));
        }
        return Ok(ExitCode::FAILURE);
    }
    if !confirm(&format!("Remove server '{name}'?"), true) {
        info("Cancelled.");
        return Ok(ExitCode::FAILURE);
    }
    save(setup, name, None)?;
    ok(&format!("Removed '{name}' from config"));
    if hermes_mcp::oauth::TokenFiles::new(setup.home.root(), name).remove() {
        ok("Cleaned up OAuth tokens");
    }
    Ok(ExitCode::SUCCESS)
}

fn list(setup: &Setup) {
    let servers = servers_section(setup);
    if servers.is_empty() {
        out("");
        info("No MCP servers configured.");
        out("");
        info("Add one with:");
        info("  hermes mcp add <name> --url <endpoint>");
        info("  hermes mcp add <name> --command <cmd> --args <args...>");
        out("");
        return;
    }
    let parsed = mcp_config(setup);
    out("");
    out("  MCP Servers:");
    out("");
    out(&format!(
        "  {:<16} {:<30} {:<12} {:<10}",
        "Name", "Transport", "Tools", "Status"
    ));
    out(&format!(
        "  {} {} {} {}",
        "─".repeat(16),
        "─".repeat(30),
        "─".repeat(12),
        "─".repeat(10)
    ));
    for (name, raw) in &servers {
        let server = parsed.get(name);
        let transport = match server.map(|s| &s.transport) {
            Some(TransportConfig::Stdio { command, args, .. }) => {
                let shown: Vec<&str> = std::iter::once(command.as_str())
                    .chain(args.iter().take(2).map(String::as_str))
                    .collect();
                shown.join(" ")
            }
            Some(TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. }) => {
                url.clone()
            }
            None => "?".into(),
        };
        let transport = if transport.chars().count() > 28 {
            format!("{}...", transport.chars().take(25).collect::<String>())
        } else {
            transport
        };
        let tools = raw.get("tools");
        let list_len = |key: &str| {
            tools
                .and_then(|t| t.get(key))
                .and_then(Value::as_array)
                .map(Vec::len)
                .filter(|n| *n > 0)
        };
        let tools_str = match (list_len("include"), list_len("exclude")) {
            (Some(n), _) => format!("{n} selected"),
            (None, Some(n)) => format!("-{n} excluded"),
            _ => "all".into(),
        };
        let status = match server {
            Some(s) if s.enabled => "✓ enabled",
            Some(_) => "✗ disabled",
            None => "✗ invalid",
        };
        out(&format!(
            "  {name:<16} {transport:<30} {tools_str:<12} {status}"
        ));
    }
    for issue in &parsed.problems {
        problem(issue);
    }
    out("");
}

fn masked(value: &str) -> String {
    if value.chars().count() > 8 {
        let head: String = value.chars().take(4).collect();
        let tail: String = value
            .chars()
            .rev()
            .take(4)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("{head}***{tail}")
    } else {
        "***".into()
    }
}

async fn test(setup: &Setup, name: &str) -> Result<ExitCode> {
    let parsed = mcp_config(setup);
    let Some(server) = parsed.get(name) else {
        problem(&format!("Server '{name}' not found in config."));
        let names: Vec<&str> = parsed.servers.iter().map(|s| s.name.as_str()).collect();
        if !names.is_empty() {
            info(&format!("Available: {}", names.join(", ")));
        }
        if let Some(issue) = parsed.problems.iter().find(|p| p.contains(name)) {
            problem(issue);
        }
        return Ok(ExitCode::FAILURE);
    };
    out("");
    out(&format!("  Testing '{name}'..."));
    match &server.transport {
        TransportConfig::Stdio { command, .. } => info(&format!("Transport: stdio → {command}")),
        TransportConfig::Http { url, headers } | TransportConfig::Sse { url, headers } => {
            let kind = if server.transport.kind() == "sse" {
                "SSE"
            } else {
                "HTTP"
            };
            info(&format!("Transport: {kind} → {url}"));
            let secret: Vec<_> = headers
                .iter()
                .filter(|(k, _)| {
                    let k = k.to_ascii_lowercase();
                    k.contains("key") || k.contains("auth")
                })
                .collect();
            if server.oauth.is_some() {
                let files = hermes_mcp::oauth::TokenFiles::new(setup.home.root(), name);
                info(if files.has_tokens() {
                    "Auth: OAuth (tokens stored)"
                } else {
                    "Auth: OAuth (not logged in yet)"
                });
            } else if secret.is_empty() {
                info("Auth: none");
            }
            for (k, v) in secret {
                out(&format!("    {k}: {}", masked(v)));
            }
        }
    }
    match probe(setup, server).await {
        Err(why) => {
            problem(&format!("Connection failed: {why}"));
            Ok(ExitCode::FAILURE)
        }
        Ok(found) => {
            ok(&format!(
                "Connected ({:.0}ms)",
                found.elapsed.as_secs_f64() * 1000.0
            ));
            if !found.server_info.is_empty() {
                info(&format!("Server: {}", found.server_info));
            }
            ok(&format!("Tools discovered: {}", found.tools.len()));
            if !found.tools.is_empty() {
                out("");
                let total: usize = found.tools.iter().map(|t| t.2).sum();
                for (tool, description, bytes) in &found.tools {
                    out(&format!(
                        "    {tool:36} {:>6} B  {}",
                        bytes,
                        short(description, 55)
                    ));
                }
                out("");
                info(&format!(
                    "Schemas: {total} bytes (~{} tokens) sent with every request",
                    total.div_ceil(4)
                ));
            }
            out("");
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn serve(setup: &Setup, verbose: bool, http: ServeHttp) -> Result<ExitCode> {
    let transport = if http.http {
        format!("http://{}:{}/mcp", http.host, http.port)
    } else {
        "stdio".to_owned()
    };
    if verbose {
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "hermes mcp serve: reading {} ({transport})",
                setup.home.state_db().display()
            );
        }
    }
    // Conversations are read where the gateway writes them.
    let server = if hermes_session::stores::required(setup) {
        let opened = hermes_session::stores::open(setup).map_err(anyhow::Error::msg)?;
        hermes_mcp::serve::HermesServer::with_store(setup.home.root(), opened.admin)
    } else {
        hermes_mcp::serve::HermesServer::new(setup.home.root())
    };
    if !http.http {
        server.serve_stdio().await.map_err(anyhow::Error::msg)?;
        return Ok(ExitCode::SUCCESS);
    }
    let listener = tokio::net::TcpListener::bind((http.host.as_str(), http.port))
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}:{}: {e}", http.host, http.port))?;
    let loopback = listener.local_addr()?.ip().is_loopback();
    let token = setup
        .env
        .get("HERMES_MCP_SERVE_TOKEN")
        .filter(|t| !t.trim().is_empty())
        .map(|t| t.trim().to_owned());
    #[allow(clippy::print_stderr)]
    {
        eprintln!("hermes mcp serve: listening on {transport}");
    }
    let options = hermes_mcp::serve::HttpServe { loopback, token };
    server
        .serve_http(listener, options)
        .await
        .map_err(anyhow::Error::msg)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::parse_selection;

    #[test]
    fn a_selection_takes_numbers_ranges_and_names_in_listing_order() {
        let names = [
            "echo",
            "add",
            "longRunningOperation",
            "sampleLLM",
            "getTinyImage",
        ];
        assert_eq!(
            parse_selection("5, 1 2-3", &names).unwrap(),
            ["echo", "add", "longRunningOperation", "getTinyImage"]
        );
        assert_eq!(parse_selection("sampleLLM", &names).unwrap(), ["sampleLLM"]);
        assert_eq!(parse_selection("", &names).unwrap().len(), 5, "empty: all");
        assert!(parse_selection("9", &names).unwrap_err().contains("1-5"));
        assert!(parse_selection("nope", &names).is_err());
    }
}
