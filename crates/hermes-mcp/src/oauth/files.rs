//! `HERMES_HOME/mcp-tokens/`: one server's OAuth state in the reference's
//! three files — `<name>.json` (the token response plus an absolute
//! `expires_at`), `<name>.client.json` (the registered client) and
//! `<name>.meta.json` (what is known of the authorization server) — each
//! written atomically, owner-only, in a directory only the owner can enter.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{AuthError, CredentialStore, OAuthTokenResponse, StoredCredentials};
use serde_json::{Map, Value, json};

/// The registered client a login used, as `<name>.client.json` keeps it.
#[derive(Clone, PartialEq)]
pub(crate) struct ClientRecord {
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) redirect_uri: String,
}

/// One server's token files.
#[derive(Debug, Clone)]
pub struct TokenFiles {
    dir: PathBuf,
    stem: String,
}

impl TokenFiles {
    /// The files of server `name` under `hermes_home`.
    pub fn new(hermes_home: &Path, name: &str) -> Self {
        Self {
            dir: hermes_home.join("mcp-tokens"),
            stem: safe_stem(name),
        }
    }

    fn tokens_path(&self) -> PathBuf {
        self.dir.join(format!("{}.json", self.stem))
    }

    fn client_path(&self) -> PathBuf {
        self.dir.join(format!("{}.client.json", self.stem))
    }

    fn meta_path(&self) -> PathBuf {
        self.dir.join(format!("{}.meta.json", self.stem))
    }

    /// Whether an access token is stored.
    pub fn has_tokens(&self) -> bool {
        read_json(&self.tokens_path()).is_some_and(|t| t.get("access_token").is_some())
    }

    /// Deletes every file of this server; true when anything was there.
    pub fn remove(&self) -> bool {
        [self.tokens_path(), self.client_path(), self.meta_path()]
            .iter()
            .filter(|p| std::fs::remove_file(p).is_ok())
            .count()
            > 0
    }

    /// Forgets the tokens only (the client registration stays usable).
    pub(crate) fn forget_tokens(&self) {
        let _ = std::fs::remove_file(self.tokens_path());
    }

    pub(crate) fn client(&self) -> Option<ClientRecord> {
        let data = read_json(&self.client_path())?;
        Some(ClientRecord {
            client_id: data.get("client_id")?.as_str()?.to_owned(),
            client_secret: data
                .get("client_secret")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            redirect_uri: data
                .get("redirect_uris")
                .and_then(Value::as_array)
                .and_then(|u| u.first())
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        })
    }

    pub(crate) fn save_client(&self, client: &ClientRecord, name: &str) -> Result<(), String> {
        let mut data = json!({
            "client_id": client.client_id,
            "redirect_uris": [client.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method":
                if client.client_secret.is_some() { "client_secret_post" } else { "none" },
            "client_name": name,
        });
        if let Some(secret) = &client.client_secret {
            data["client_secret"] = json!(secret);
        }
        self.write(&self.client_path(), &data)
    }

    fn issuer(&self) -> Option<String> {
        read_json(&self.meta_path())?
            .get("issuer")?
            .as_str()
            .map(str::to_owned)
    }

    fn write(&self, path: &Path, data: &Value) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        restrict_dir(&self.dir);
        let text = serde_json::to_vec_pretty(data).map_err(|e| e.to_string())?;
        hermes_fs::write_atomic(path, &text, hermes_fs::Access::Private)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// The stored credentials as rmcp reads them: the remaining lifetime is
    /// recomputed from `expires_at` so a token that expired while Hermes was
    /// not running is refreshed before its first use.
    fn load_credentials(&self) -> Option<StoredCredentials> {
        let client = self.client()?;
        let mut tokens = read_json(&self.tokens_path())?;
        let now = now_secs();
        let expires_at = tokens.remove("expires_at").and_then(|v| v.as_f64());
        if let Some(at) = expires_at {
            tokens.insert(
                "expires_in".into(),
                json!((at - now as f64).max(0.0) as u64),
            );
        }
        let scopes: Vec<String> = tokens
            .get("scope")
            .and_then(Value::as_str)
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        let response: OAuthTokenResponse = serde_json::from_value(Value::Object(tokens)).ok()?;
        Some(
            StoredCredentials::new(client.client_id, Some(response), scopes, Some(now))
                .with_issuer(self.issuer()),
        )
    }

    fn save_credentials(&self, credentials: &StoredCredentials) -> Result<(), String> {
        if let Some(issuer) = &credentials.issuer {
            let mut meta = read_json(&self.meta_path()).unwrap_or_default();
            meta.insert("issuer".into(), json!(issuer));
            self.write(&self.meta_path(), &Value::Object(meta))?;
        }
        let Some(response) = &credentials.token_response else {
            self.forget_tokens();
            return Ok(());
        };
        let mut data = serde_json::to_value(response).map_err(|e| e.to_string())?;
        if let Some(map) = data.as_object_mut() {
            if map.get("scope").is_none_or(Value::is_null) && !credentials.granted_scopes.is_empty()
            {
                map.insert("scope".into(), json!(credentials.granted_scopes.join(" ")));
            }
            if let Some(seconds) = map.get("expires_in").and_then(Value::as_u64) {
                let received = credentials.token_received_at.unwrap_or_else(now_secs);
                map.insert("expires_at".into(), json!((received + seconds) as f64));
            }
            map.retain(|_, v| !v.is_null());
        }
        self.write(&self.tokens_path(), &data)
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFiles {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.load_credentials())
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.save_credentials(&credentials)
            .map_err(AuthError::InternalError)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.forget_tokens();
        Ok(())
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn read_json(path: &Path) -> Option<Map<String, Value>> {
    let text = std::fs::read(path).ok()?;
    match serde_json::from_slice(&text).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// A server name as a file name: word characters and `-` kept, the rest `_`
/// (the reference's rule, so both find the same files).
fn safe_stem(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed: String = mapped.trim_matches('_').chars().take(128).collect();
    if trimmed.is_empty() {
        "default".into()
    } else {
        trimmed
    }
}

#[cfg(unix)]
fn restrict_dir(dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
}

#[cfg(not(unix))]
fn restrict_dir(_dir: &Path) {}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn names_become_the_references_file_names() {
        assert_eq!(safe_stem("github"), "github");
        assert_eq!(safe_stem("my server/../x"), "my_server____x");
        assert_eq!(safe_stem("///"), "default");
    }

    #[tokio::test]
    async fn tokens_round_trip_with_an_absolute_expiry_and_private_files() {
        let home = tempfile::tempdir().unwrap();
        let files = TokenFiles::new(home.path(), "docs");
        files
            .save_client(
                &ClientRecord {
                    client_id: "cid".into(),
                    client_secret: None,
                    redirect_uri: "http://127.0.0.1:5/callback".into(),
                },
                "Hermes Agent",
            )
            .unwrap();
        let response: OAuthTokenResponse = serde_json::from_value(json!({
            "access_token": "at-1", "token_type": "Bearer", "expires_in": 3600,
            "refresh_token": "rt-1", "scope": "read write"
        }))
        .unwrap();
        let stored = StoredCredentials::new("cid".into(), Some(response), vec![], Some(1000));
        files.save(stored).await.unwrap();
        let raw = read_json(&files.tokens_path()).unwrap();
        assert_eq!(raw["expires_at"], json!(4600.0));
        assert_eq!(raw["refresh_token"], json!("rt-1"));
        // Written long "ago": what is left of its hour is nothing.
        let loaded = files.load().await.unwrap().unwrap();
        let token = loaded.token_response.unwrap();
        assert_eq!(
            serde_json::to_value(&token).unwrap()["expires_in"],
            json!(0)
        );
        assert_eq!(loaded.granted_scopes, ["read", "write"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&files.tokens_path()), 0o600);
            assert_eq!(mode(&files.client_path()), 0o600);
            assert_eq!(mode(&home.path().join("mcp-tokens")), 0o700);
        }
        assert!(files.has_tokens());
        assert!(files.remove());
        assert!(!files.has_tokens());
        assert!(files.client().is_none());
    }
}
