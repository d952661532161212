//! The terminal's side of MCP OAuth: showing the authorization URL and
//! opening the user's browser (`$BROWSER` first, as Python's `webbrowser`
//! reads it), and `hermes mcp login` / `hermes mcp logout`.

use std::io::IsTerminal as _;
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;

use anyhow::Result;
use hermes_mcp::oauth::{OAuthPrompt, TokenFiles};
use hermes_session::Setup;

/// Shows the URL on stderr and opens it in a browser.
#[derive(Debug)]
pub(crate) struct BrowserPrompt;

impl OAuthPrompt for BrowserPrompt {
    #[allow(clippy::print_stderr)]
    fn open(&self, server: &str, url: &str) {
        eprintln!(
            "MCP OAuth: authorization required for '{server}'.\n  Open this URL in your browser:\n\n    {url}\n"
        );
        if open_browser(url) {
            eprintln!("  (Browser opened automatically.)");
        } else if std::env::var_os("SSH_CLIENT").is_some() || std::env::var_os("SSH_TTY").is_some()
        {
            eprintln!(
                "  (Over SSH: open the URL on your own machine; its redirect to 127.0.0.1 needs \
                 the callback port forwarded, e.g. `ssh -L <port>:127.0.0.1:<port>`.)"
            );
        }
    }
}

/// Whether sessions of this run may run an OAuth login: a person is at the
/// terminal, or `HERMES_MCP_OAUTH_INTERACTIVE` says one is at the browser.
pub(crate) fn person_present(interactive: bool, setup: &Setup) -> bool {
    interactive || std::io::stdin().is_terminal() || setup.env_flag("HERMES_MCP_OAUTH_INTERACTIVE")
}

/// Lets `services`' MCP servers log in through the browser when a person is present.
pub(crate) fn install(services: &hermes_session::Services, interactive: bool) {
    if person_present(interactive, services.setup()) {
        services.set_mcp_oauth_prompt(Arc::new(BrowserPrompt));
    }
}

/// Starts the browser on `url` without waiting for it: each `$BROWSER`
/// entry (`:`-separated; `%s` stands for the URL, else it is appended),
/// else `xdg-open` where there is a display.
fn open_browser(url: &str) -> bool {
    let mut candidates: Vec<Vec<String>> = std::env::var("BROWSER")
        .unwrap_or_default()
        .split(':')
        .filter(|c| !c.trim().is_empty())
        .map(|entry| {
            let mut words: Vec<String> = entry.split_whitespace().map(str::to_owned).collect();
            if words.iter().any(|w| w.contains("%s")) {
                for w in &mut words {
                    *w = w.replace("%s", url);
                }
            } else {
                words.push(url.to_owned());
            }
            words
        })
        .collect();
    let display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    if display {
        candidates.push(vec!["xdg-open".into(), url.into()]);
    }
    candidates.into_iter().any(|words| {
        let Some((program, args)) = words.split_first() else {
            return false;
        };
        let spawned = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn();
        match spawned {
            Ok(mut child) => {
                // Reaped in the background: the login waits for the redirect,
                // which the browser only makes while it runs.
                std::thread::spawn(move || child.wait());
                true
            }
            Err(_) => false,
        }
    })
}

/// `hermes mcp login NAME`: a fresh authorization, then the tools it opens.
pub(crate) async fn login(setup: &Setup, name: &str) -> Result<ExitCode> {
    let config = crate::mcp_cmd::mcp_config(setup);
    let Some(server) = config.get(name) else {
        crate::mcp_cmd::problem(&format!("Server '{name}' not found in config."));
        return Ok(ExitCode::FAILURE);
    };
    if server.oauth.is_none() {
        crate::mcp_cmd::problem(&format!(
            "Server '{name}' does not use OAuth: set `auth: oauth` under mcp_servers.{name} \
             (or re-add it with `hermes mcp add {name} --url … --auth oauth`)."
        ));
        return Ok(ExitCode::FAILURE);
    }
    crate::mcp_cmd::out(&format!("Starting OAuth flow for '{name}'..."));
    let home = setup.home.root();
    if let Err(why) = hermes_mcp::oauth::login(server, home, Arc::new(BrowserPrompt)).await {
        crate::mcp_cmd::problem(&format!("OAuth login failed: {why}"));
        return Ok(ExitCode::FAILURE);
    }
    match crate::mcp_cmd::probe(setup, server).await {
        Ok(found) => {
            crate::mcp_cmd::ok(&format!(
                "Authenticated — {} tool(s) available",
                found.tools.len()
            ));
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            crate::mcp_cmd::problem(&format!(
                "Authorized, but connecting afterwards failed: {why}"
            ));
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `hermes mcp logout NAME`: forgets the tokens and client registration.
pub(crate) fn logout(setup: &Setup, name: &str) -> ExitCode {
    if TokenFiles::new(setup.home.root(), name).remove() {
        crate::mcp_cmd::ok(&format!("Removed the OAuth tokens of '{name}'"));
    } else {
        crate::mcp_cmd::info(&format!("No OAuth tokens stored for '{name}'."));
    }
    ExitCode::SUCCESS
}
