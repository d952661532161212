//! OAuth for HTTP MCP servers (`auth: oauth`), as the MCP authorization spec
//! describes it, on rmcp's client: tokens live in the reference's files under
//! `HERMES_HOME/mcp-tokens/`, every request carries the current one, an
//! expired token is refreshed silently, and a server that needs a (new)
//! login — a 401 nothing can refresh, or a 403 asking for more scope — gets
//! one through the front-end's [`OAuthPrompt`] where a person is present,
//! or an error naming `hermes mcp login <server>` where nobody is.

mod callback;
mod files;
mod flow;

use std::path::Path;
use std::sync::Arc;

use rmcp::transport::AuthClient;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, OAuthClientConfig,
};

use crate::config::{OAuthConfig, ServerConfig, TransportConfig};
pub use files::TokenFiles;
pub(crate) use flow::{Login, authorize};

/// Where a person can complete a login: the front-end shows the URL and
/// opens it in their browser. Only front-ends with a person at hand give one.
pub trait OAuthPrompt: Send + Sync + std::fmt::Debug {
    /// Asks the person to open `url` to authorize Hermes with `server`.
    fn open(&self, server: &str, url: &str);
}

/// The one line a server that needs a login says where nobody can log in.
pub fn login_needed(server: &str) -> String {
    format!(
        "MCP server '{server}' needs OAuth authorization: run `hermes mcp login {server}`, \
         then start a new session"
    )
}

/// rmcp builds its own HTTP clients; reqwest needs a TLS provider first.
pub(crate) fn install_crypto() {
    // Err means another provider is installed already, which is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The HTTP client of an `auth: oauth` server: the stored token on every
/// request (refreshed when it expires), requests without one when none is
/// stored yet so the server's challenge says what to ask for.
pub(crate) async fn authorized_client(
    name: &str,
    url: &str,
    oauth: &OAuthConfig,
    hermes_home: &Path,
    http: &reqwest::Client,
) -> Result<AuthClient<reqwest::Client>, String> {
    install_crypto();
    let files = TokenFiles::new(hermes_home, name);
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| format!("OAuth set-up failed: {e}"))?;
    manager.set_credential_store(files.clone());
    if files.has_tokens() {
        discover(&mut manager, url, None).await?;
    }
    let stored = manager
        .initialize_from_store()
        .await
        .map_err(|e| format!("OAuth discovery failed: {e}"))?;
    if stored && let Some(client) = files.client() {
        let (id, secret) = match &oauth.client_id {
            Some(id) => (id.clone(), oauth.client_secret.clone()),
            None => (client.client_id, client.client_secret),
        };
        let mut config = OAuthClientConfig::new(id, client.redirect_uri);
        if let Some(secret) = secret {
            config = config.with_client_secret(secret);
        }
        manager
            .configure_client(config)
            .map_err(|e| format!("OAuth client set-up failed: {e}"))?;
    }
    Ok(AuthClient::new(http.clone(), manager))
}

/// Finds the authorization server (rmcp's resolver: the challenge's
/// protected-resource metadata, the well-known documents, the 2025-03-26
/// endpoint fallbacks) and gives its metadata to `manager`.
pub(crate) async fn discover(
    manager: &mut AuthorizationManager,
    url: &str,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, String> {
    let metadata = match manager.resolve_metadata_from_challenge(challenge).await {
        Ok(resolution) => resolution.metadata,
        // A 2025-03-26 server (no protected-resource metadata) serves its
        // metadata at the root, and some name an issuer with a path there;
        // that spec derives the metadata URL from the server's origin, so
        // what it serves there is the server's.
        Err(AuthError::AuthorizationServerMismatch { .. }) => root_metadata(url).await?,
        Err(e) => return Err(format!("OAuth discovery failed: {e}")),
    };
    manager.set_metadata(metadata.clone());
    Ok(metadata)
}

async fn root_metadata(url: &str) -> Result<AuthorizationMetadata, String> {
    let mut root = url::Url::parse(url).map_err(|e| format!("bad server URL {url}: {e}"))?;
    root.set_path("/.well-known/oauth-authorization-server");
    root.set_query(None);
    let response = plain_client()
        .get(root.as_str())
        .send()
        .await
        .map_err(|e| format!("OAuth discovery failed: {e}"))?;
    if !response.status().is_success() {
        return Err(format!(
            "OAuth discovery failed: {root} answered {}",
            response.status()
        ));
    }
    response
        .json()
        .await
        .map_err(|e| format!("OAuth discovery failed: {root} is not OAuth metadata: {e}"))
}

/// `hermes mcp login`: forgets what was stored, asks the server what it
/// wants (an unauthenticated `initialize`), and runs the login.
pub async fn login(
    server: &ServerConfig,
    hermes_home: &Path,
    prompt: Arc<dyn OAuthPrompt>,
) -> Result<(), String> {
    let (TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. }) = &server.transport
    else {
        return Err(format!(
            "'{}' is a stdio server: OAuth is only for HTTP servers",
            server.name
        ));
    };
    let default = OAuthConfig::default();
    let oauth = server.oauth.as_ref().unwrap_or(&default);
    TokenFiles::new(hermes_home, &server.name).remove();
    let challenge = probe_challenge(url).await;
    authorize(
        Login {
            name: &server.name,
            url,
            oauth,
            hermes_home,
            challenge: challenge.as_deref(),
        },
        prompt.as_ref(),
    )
    .await
}

/// A client for the requests made around rmcp's (probe, root metadata).
fn plain_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .unwrap_or_default()
}

/// The `WWW-Authenticate` header an unauthenticated `initialize` draws.
async fn probe_challenge(url: &str) -> Option<String> {
    install_crypto();
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "hermes", "version": env!("CARGO_PKG_VERSION") }
        }
    });
    let response = plain_client()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .ok()?;
    response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}
