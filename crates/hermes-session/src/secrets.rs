//! The credentials a session knows by variable name, which the processes its
//! tools start (`terminal`, `execute_code`) never inherit: a key exported in
//! the user's shell must not be one `printenv` away from the model.

use std::collections::BTreeSet;

use hermes_llm::providers::PROVIDERS;
use hermes_llm::redact::KnownSecrets;

use crate::setup::Setup;

/// Credentials of the tools and messaging platforms Hermes talks to, and
/// endpoint variables that would point a child at Hermes' own providers.
const KNOWN: &[&str] = &[
    "AWS_BEARER_TOKEN_BEDROCK",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "OPENAI_ORG_ID",
    "OPENAI_ORGANIZATION",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_TOKEN",
    "GOOGLE_API_KEY",
    "VERTEX_CREDENTIALS_PATH",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "PERPLEXITY_API_KEY",
    "COHERE_API_KEY",
    "FIREWORKS_API_KEY",
    "HELICONE_API_KEY",
    "PARALLEL_API_KEY",
    "FIRECRAWL_API_KEY",
    "FIRECRAWL_API_URL",
    "BRAVE_API_KEY",
    "TAVILY_API_KEY",
    "EXA_API_KEY",
    "SEARXNG_URL",
    "API_SERVER_KEY",
    "TELEGRAM_BOT_TOKEN",
    "DISCORD_BOT_TOKEN",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "MATRIX_ACCESS_TOKEN",
    "MATRIX_PASSWORD",
    "WEBHOOK_SECRET",
    "HASS_TOKEN",
    "EMAIL_PASSWORD",
    "HERMES_DASHBOARD_SESSION_TOKEN",
    "GH_TOKEN",
    "GITHUB_APP_PRIVATE_KEY_PATH",
    "MODAL_TOKEN_ID",
    "MODAL_TOKEN_SECRET",
    "DAYTONA_API_KEY",
];

/// Per-task side-model credentials and relay secrets, injected under names no
/// registry lists.
fn dynamic_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    (upper.starts_with("AUXILIARY_")
        && (upper.ends_with("_API_KEY") || upper.ends_with("_BASE_URL")))
        || (upper.starts_with("GATEWAY_RELAY_")
            && ["_SECRET", "_KEY", "_TOKEN"]
                .iter()
                .any(|s| upper.ends_with(s)))
}

/// Every variable name the session's tool processes must not see: the
/// providers' keys and endpoint overrides, the credentials above, the
/// `key_env` of user-defined and fallback providers, and dynamic secrets
/// present in the environment.
pub fn credential_vars(setup: &Setup) -> Vec<String> {
    let mut names: BTreeSet<String> = BTreeSet::new();
    for spec in PROVIDERS {
        names.extend(spec.key_env.iter().map(|k| (*k).to_owned()));
        names.extend(spec.base_url_env.map(str::to_owned));
    }
    names.extend(KNOWN.iter().map(|k| (*k).to_owned()));
    let key_envs = |v: Option<&serde_json::Value>| -> Vec<String> {
        let entries: Vec<&serde_json::Value> = match v {
            Some(serde_json::Value::Object(map)) => map.values().collect(),
            Some(serde_json::Value::Array(items)) => items.iter().collect(),
            _ => Vec::new(),
        };
        entries
            .iter()
            .filter_map(|e| e.get("key_env").and_then(serde_json::Value::as_str))
            .map(str::to_owned)
            .collect()
    };
    names.extend(key_envs(setup.config.get("providers")));
    names.extend(key_envs(setup.config.get("fallback_providers")));
    names.extend(
        setup
            .env
            .iter()
            .map(|(k, _)| k)
            .filter(|k| dynamic_secret(k))
            .map(str::to_owned),
    );
    // The user's Claude Code login is theirs, not a Hermes credential; stripping
    // it would log agent-spawned `claude` CLIs out.
    names.remove("CLAUDE_CODE_OAUTH_TOKEN");
    names.into_iter().collect()
}

/// The secrets this installation holds, masked wherever they appear:
/// every `.env` value except configuration (see
/// [`hermes_llm::redact::is_config_name`]), the values of the credential
/// variables above as the process has them, and the credential fields of
/// `auth.json`. Unreadable files contribute nothing.
pub fn known_secrets(setup: &Setup) -> KnownSecrets {
    let mut dotenv = hermes_state::Env::default();
    let names = dotenv
        .load_dotenv(&setup.home.env_file())
        .unwrap_or_default();
    let dotenv_pairs: Vec<(&str, &str)> = names
        .iter()
        .filter_map(|name| dotenv.get(name).map(|value| (name.as_str(), value)))
        .collect();
    let credentials = credential_vars(setup);
    let credential_values: Vec<&str> = credentials
        .iter()
        .filter_map(|name| setup.env.get(name))
        .collect();
    let auth = std::fs::read_to_string(setup.home.root().join("auth.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
    KnownSecrets::from_sources(dotenv_pairs, credential_values, auth.as_ref())
}

#[cfg(test)]
mod tests {
    use hermes_state::{Config, Env, HermesHome};

    use super::*;

    #[test]
    fn provider_keys_config_keys_and_dynamic_secrets_are_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let home = HermesHome::from_env(Some(&dir.path().display().to_string()), None).unwrap();
        std::fs::write(
            home.config_file(),
            "providers:\n  mine:\n    api: http://x/v1\n    key_env: MY_CORP_KEY\n\
             fallback_providers:\n  - provider: openai\n    model: m\n    key_env: BACKUP_KEY\n",
        )
        .unwrap();
        let env = Env::from_pairs([
            ("AUXILIARY_VISION_API_KEY", "x"),
            ("GATEWAY_RELAY_URL", "not secret"),
            ("PATH", "/bin"),
        ]);
        let setup = Setup {
            config: Config::load(&home.config_file(), &env).unwrap(),
            env,
            home,
        };
        let hidden = credential_vars(&setup);
        for name in [
            "OPENROUTER_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "AWS_BEARER_TOKEN_BEDROCK",
            "TELEGRAM_BOT_TOKEN",
            "MY_CORP_KEY",
            "BACKUP_KEY",
            "AUXILIARY_VISION_API_KEY",
        ] {
            assert!(hidden.iter().any(|h| h == name), "{name} not hidden");
        }
        for visible in [
            "PATH",
            "GATEWAY_RELAY_URL",
            "AWS_ACCESS_KEY_ID",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ] {
            assert!(!hidden.iter().any(|h| h == visible), "{visible} hidden");
        }
    }

    #[test]
    fn known_secrets_come_from_dotenv_the_credential_variables_and_auth_json() {
        use hermes_llm::redact::{RedactOptions, redact_with_known};
        let dir = tempfile::tempdir().unwrap();
        let home = HermesHome::from_env(Some(&dir.path().display().to_string()), None).unwrap();
        std::fs::write(
            home.env_file(),
            "CORP_SIGNING=prefixless-value-0042\nHERMES_MODEL=some/model-name\n\
             OPENAI_BASE_URL=https://api.example.com/v1\n",
        )
        .unwrap();
        std::fs::write(
            home.root().join("auth.json"),
            r#"{"credential_pool":{"openai":[{"label":"work key","access_token":"pooled-key-0123456789"}]}}"#,
        )
        .unwrap();
        let env = Env::from_pairs([("OPENROUTER_API_KEY", "shell-exported-key-77")]);
        let setup = Setup {
            config: Config::without_user_file(&env),
            env,
            home,
        };
        let known = known_secrets(&setup);
        let text = "prefixless-value-0042 shell-exported-key-77 pooled-key-0123456789 \
                    some/model-name https://api.example.com/v1 work key";
        assert_eq!(
            redact_with_known(text, RedactOptions::STRICT, Some(&known)),
            "*** *** *** some/model-name https://api.example.com/v1 work key"
        );
    }
}
