//! One authorization-code login with a server: discovery from the server's
//! challenge (protected-resource metadata, then authorization-server and
//! OpenID metadata, then the 2025-03-26 fallbacks — rmcp's resolver), the
//! client (configured, registered earlier, or registered now), PKCE S256 and
//! the `resource` parameter (rmcp), the browser round trip through the
//! loopback listener, and the tokens saved into the server's token files.

use std::path::Path;

use rmcp::transport::auth::{AuthorizationManager, AuthorizationRequest, AuthorizationSession};

use super::callback::Callback;
use super::files::{ClientRecord, TokenFiles};
use super::{OAuthPrompt, install_crypto};
use crate::config::OAuthConfig;

/// The client name dynamic registration uses (the reference's).
const DEFAULT_CLIENT_NAME: &str = "Hermes Agent";

/// What one login needs.
pub(crate) struct Login<'a> {
    pub(crate) name: &'a str,
    pub(crate) url: &'a str,
    pub(crate) oauth: &'a OAuthConfig,
    pub(crate) hermes_home: &'a Path,
    /// The `WWW-Authenticate` value of the 401/403 that asked for it.
    pub(crate) challenge: Option<&'a str>,
}

/// Runs the login; on success the tokens are in the token files.
pub(crate) async fn authorize(login: Login<'_>, prompt: &dyn OAuthPrompt) -> Result<(), String> {
    install_crypto();
    let files = TokenFiles::new(login.hermes_home, login.name);
    let callback = bind_callback(login.oauth, &files).await?;
    let redirect_uri = callback.redirect_uri.clone();

    let mut manager = AuthorizationManager::new(login.url)
        .await
        .map_err(|e| format!("OAuth set-up failed: {e}"))?;
    manager.set_credential_store(files.clone());
    let metadata = super::discover(&mut manager, login.url, login.challenge).await?;
    let takes_documents = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);

    let client = match &login.oauth.client_metadata_url {
        // A client ID metadata document: its URL is the client id, nothing
        // to register.
        Some(document) if takes_documents && login.oauth.client_id.is_none() => {
            let client = ClientRecord {
                client_id: document.clone(),
                client_secret: None,
                redirect_uri: redirect_uri.clone(),
            };
            files.save_client(&client, client_name(login.oauth))?;
            client
        }
        _ => client_for(&mut manager, &login, &files, &redirect_uri).await?,
    };
    let mut request = AuthorizationRequest::new(redirect_uri.clone())
        .with_client_name(client_name(login.oauth))
        .with_preregistered_client(client.client_id.clone());
    if let Some(secret) = &client.client_secret {
        request = request.with_client_secret(secret.clone());
    }
    if let Some(scope) = &login.oauth.scope {
        request = request.with_scopes(scope.split_whitespace());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| format!("OAuth authorization could not start: {e}"))?;

    prompt.open(login.name, session.get_authorization_url());
    let redirected = callback.wait(login.oauth.timeout).await?;
    if let Some(why) = url::Url::parse(&redirected).ok().and_then(|u| {
        u.query_pairs()
            .find(|(k, _)| k == "error")
            .map(|(_, v)| v.into_owned())
    }) {
        return Err(format!("the authorization server refused: {why}"));
    }
    session
        .handle_callback_url(&redirected)
        .await
        .map_err(|e| format!("the token exchange failed: {e}"))?;
    Ok(())
}

/// Listens where the redirect URI points: the configured port, else the port
/// of the client registered earlier (its registration names that URI), else
/// any free one.
async fn bind_callback(oauth: &OAuthConfig, files: &TokenFiles) -> Result<Callback, String> {
    let host = oauth.redirect_host.as_deref().unwrap_or("127.0.0.1");
    if let Some(uri) = &oauth.redirect_uri {
        let port = url::Url::parse(uri)
            .ok()
            .and_then(|u| u.port_or_known_default())
            .unwrap_or(oauth.redirect_port);
        return Callback::bind(host, port, Some(uri)).await;
    }
    if oauth.redirect_port != 0 {
        return Callback::bind(host, oauth.redirect_port, None).await;
    }
    let cached = files
        .client()
        .and_then(|c| url::Url::parse(&c.redirect_uri).ok())
        .filter(|u| u.host_str() == Some(host))
        .and_then(|u| u.port());
    if let Some(port) = cached
        && let Ok(callback) = Callback::bind(host, port, None).await
    {
        return Ok(callback);
    }
    Callback::bind(host, 0, None).await
}

/// The client to authorize as: the configured one, the one registered for
/// this redirect URI before, or a new dynamic registration (kept, secret
/// included, in `<name>.client.json`).
async fn client_for(
    manager: &mut AuthorizationManager,
    login: &Login<'_>,
    files: &TokenFiles,
    redirect_uri: &str,
) -> Result<ClientRecord, String> {
    if let Some(client_id) = &login.oauth.client_id {
        let client = ClientRecord {
            client_id: client_id.clone(),
            client_secret: login.oauth.client_secret.clone(),
            redirect_uri: redirect_uri.to_owned(),
        };
        // The secret stays in config/.env; the file keeps the id and URI.
        let kept = ClientRecord {
            client_secret: None,
            ..client.clone()
        };
        files.save_client(&kept, client_name(login.oauth))?;
        return Ok(client);
    }
    if let Some(client) = files.client().filter(|c| c.redirect_uri == redirect_uri) {
        return Ok(client);
    }
    let registered = manager
        .register_client(client_name(login.oauth), redirect_uri, &[])
        .await
        .map_err(|e| {
            format!(
                "dynamic client registration failed ({e}); register a client with the \
                 authorization server and set mcp_servers.{}.oauth.client_id (and client_secret)",
                login.name
            )
        })?;
    let client = ClientRecord {
        client_id: registered.client_id,
        client_secret: registered.client_secret,
        redirect_uri: redirect_uri.to_owned(),
    };
    files.save_client(&client, client_name(login.oauth))?;
    Ok(client)
}

fn client_name(oauth: &OAuthConfig) -> &str {
    oauth.client_name.as_deref().unwrap_or(DEFAULT_CLIENT_NAME)
}
