//! Opens one connection: spawns the stdio child (filtered environment,
//! stderr to `logs/mcp-stderr.log`) or dials the HTTP/SSE endpoint, then runs
//! the MCP handshake.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use rmcp::ServiceExt as _;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

use crate::config::TransportConfig;
use crate::handler::Handler;

/// A live connection.
pub(crate) type Running = RunningService<RoleClient, Handler>;

/// Variables every stdio server inherits; everything else (API keys above
/// all) stays out unless the server's `env:` names it.
const SAFE_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR",
];

/// The environment a stdio server starts with.
pub fn safe_env(
    process: &BTreeMap<String, String>,
    configured: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = process
        .iter()
        .filter(|(k, _)| SAFE_ENV.contains(&k.as_str()) || k.starts_with("XDG_"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    env.extend(configured.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

/// Why a connection attempt failed.
pub(crate) enum Failure {
    /// The server asked for an OAuth login (its `WWW-Authenticate`, if any).
    NeedsAuth(Option<String>),
    /// Anything else, said for the user.
    Other(String),
}

impl From<String> for Failure {
    fn from(text: String) -> Self {
        Failure::Other(text)
    }
}

impl Failure {
    /// The failure of a request on a live connection: a login when the
    /// server's 401/403 asked for one.
    pub(crate) fn of_request(e: &rmcp::ServiceError, what: &str) -> Self {
        match login_wanted(e) {
            Some(challenge) => Failure::NeedsAuth(challenge),
            None => Failure::Other(format!("{what} failed: {e}")),
        }
    }
}

/// `Some(challenge)` when a request failed because the server wants an
/// OAuth login (its `WWW-Authenticate`, when it sent one).
pub(crate) fn login_wanted(e: &rmcp::ServiceError) -> Option<Option<String>> {
    if let Some(challenge) = e.auth_challenge() {
        return Some(Some(challenge.to_owned()));
    }
    e.is_authorization_required().then_some(None)
}

/// What a connection attempt needs besides the server's own config.
pub(crate) struct Dial<'a> {
    pub(crate) name: &'a str,
    pub(crate) transport: &'a TransportConfig,
    pub(crate) oauth: Option<&'a crate::config::OAuthConfig>,
    pub(crate) env: &'a BTreeMap<String, String>,
    pub(crate) logs: &'a Path,
    pub(crate) http: &'a crate::server::Shared,
}

/// Connects and completes `initialize`.
pub(crate) async fn connect(dial: Dial<'_>, handler: Handler) -> Result<Running, Failure> {
    match dial.transport {
        TransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args)
                .env_clear()
                .envs(safe_env(dial.env, env))
                .kill_on_drop(true);
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            let stderr = stderr_log(dial.logs, dial.name);
            let (transport, _) = TokioChildProcess::builder(cmd)
                .stderr(stderr)
                .spawn()
                .map_err(|e| spawn_error(command, &e))?;
            handler
                .serve(transport)
                .await
                .map_err(|e| handshake_error(&e.to_string()).into())
        }
        TransportConfig::Http { url, headers } => {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            config = config.custom_headers(header_map(headers)?);
            let served = match dial.oauth {
                Some(oauth) => {
                    let client = crate::oauth::authorized_client(
                        dial.name,
                        url,
                        oauth,
                        &dial.http.home,
                        dial.http.http(),
                    )
                    .await?;
                    handler
                        .serve(StreamableHttpClientTransport::with_client(client, config))
                        .await
                }
                None => {
                    let transport = StreamableHttpClientTransport::with_client(
                        dial.http.http().clone(),
                        config,
                    );
                    handler.serve(transport).await
                }
            };
            served.map_err(|e| {
                if let Some(challenge) = e.auth_challenge() {
                    Failure::NeedsAuth(Some(challenge.to_owned()))
                } else if dial.oauth.is_some()
                    && (e.is_authorization_required() || e.to_string().contains("401"))
                {
                    // A 2025-03-26 server answers 401 without a challenge.
                    Failure::NeedsAuth(None)
                } else {
                    handshake_error(&e.to_string()).into()
                }
            })
        }
        TransportConfig::Sse { url, headers } => {
            if dial.oauth.is_some() {
                return Err(Failure::Other(
                    "auth: oauth works with Streamable HTTP servers only (this one is `transport: sse`)"
                        .into(),
                ));
            }
            let transport = crate::sse::SseTransport::open(dial.http.http(), url, headers).await?;
            handler
                .serve(transport)
                .await
                .map_err(|e| handshake_error(&e.to_string()).into())
        }
    }
}

fn header_map(
    headers: &BTreeMap<String, String>,
) -> Result<HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>, String> {
    headers
        .iter()
        .map(|(k, v)| {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| format!("invalid header name {k:?}"))?;
            let value = reqwest::header::HeaderValue::from_str(v)
                .map_err(|_| format!("invalid value for header {k:?}"))?;
            Ok((name, value))
        })
        .collect()
}

fn spawn_error(command: &str, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        format!("cannot start '{command}': command not found (install it or fix `command:`)")
    } else {
        format!("cannot start '{command}': {e}")
    }
}

fn handshake_error(detail: &str) -> String {
    format!("the server did not complete the MCP handshake: {detail}")
}

/// Appends a header for this start to `logs/mcp-stderr.log` and returns the
/// file as the child's stderr (or `/dev/null` when it cannot be opened).
fn stderr_log(logs: &Path, server: &str) -> Stdio {
    let opened = std::fs::create_dir_all(logs).and_then(|_| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(logs.join("mcp-stderr.log"))
    });
    match opened {
        Ok(mut file) => {
            let _ = writeln!(
                file,
                "\n===== [{}] starting MCP server '{server}' =====",
                utc_now()
            );
            Stdio::from(file)
        }
        Err(_) => Stdio::null(),
    }
}

/// `YYYY-MM-DD HH:MM:SS` in UTC.
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    hermes_state::time::UtcTime::from_unix(i64::try_from(secs).unwrap_or(0))
        .iso()
        .replace('T', " ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn only_safe_variables_reach_stdio_servers() {
        let process: BTreeMap<String, String> = [
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("XDG_CONFIG_HOME", "/x"),
            ("HOME", "/h"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let configured: BTreeMap<String, String> = [("TOKEN".to_owned(), "mine".to_owned())].into();
        let env = safe_env(&process, &configured);
        assert_eq!(
            env.keys().map(String::as_str).collect::<Vec<_>>(),
            ["HOME", "PATH", "TOKEN", "XDG_CONFIG_HOME"]
        );
    }

    #[test]
    fn timestamps_look_right() {
        let now = utc_now();
        assert_eq!(now.len(), 19);
        assert!(now.starts_with("20"), "{now}");
    }
}
