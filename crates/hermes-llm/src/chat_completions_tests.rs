use std::time::Duration;

use super::{ChatCompletionsConfig, ChatCompletionsProvider, install_crypto_provider};
use crate::{LlmError, Provider};

#[test]
fn https_client_builds() {
    let p = ChatCompletionsProvider::new(
        "openrouter",
        ChatCompletionsConfig::new("https://openrouter.ai/api/v1/"),
    )
    .unwrap();
    assert_eq!(p.name(), "openrouter");
    assert_eq!(
        p.endpoint(),
        "https://openrouter.ai/api/v1/chat/completions"
    );
    // Building a second one reuses the installed crypto provider.
    install_crypto_provider();
    assert!(
        ChatCompletionsProvider::new("x", ChatCompletionsConfig::new("https://example.com/v1"))
            .is_ok()
    );
}

#[test]
fn defaults() {
    let cfg = ChatCompletionsConfig::default();
    assert_eq!(cfg.idle_timeout, Duration::from_secs(120));
    assert_eq!(cfg.connect_timeout, Duration::from_secs(30));
    assert!(cfg.api_key.is_none() && cfg.extra_headers.is_empty());
}

#[test]
fn bad_config_is_rejected() {
    let bad = |cfg: ChatCompletionsConfig| {
        matches!(
            ChatCompletionsProvider::new("x", cfg),
            Err(LlmError::Config(_))
        )
    };
    assert!(bad(ChatCompletionsConfig::new("")));
    assert!(bad(ChatCompletionsConfig::new("not a url")));
    assert!(bad(ChatCompletionsConfig::new("ftp://host/v1")));
    let mut cfg = ChatCompletionsConfig::new("http://localhost:1/v1");
    cfg.extra_headers.push(("bad header".into(), "v".into()));
    assert!(bad(cfg));
    let mut cfg = ChatCompletionsConfig::new("http://localhost:1/v1");
    cfg.extra_headers
        .push(("x-ok".into(), "line\nbreak".into()));
    assert!(bad(cfg));
}

#[test]
fn debug_hides_the_key() {
    let mut cfg = ChatCompletionsConfig::new("http://localhost:1/v1");
    cfg.api_key = Some("sk-very-secret".into());
    assert!(!format!("{cfg:?}").contains("sk-very-secret"));
    let p = ChatCompletionsProvider::new("x", cfg).unwrap();
    let shown = format!("{p:?}");
    assert!(
        !shown.contains("sk-very-secret") && shown.contains("redacted"),
        "{shown}"
    );
}

#[tokio::test]
async fn list_models_reads_the_server_listing() {
    let mock = hermes_mock::MockServer::start();
    let provider =
        ChatCompletionsProvider::new("custom", ChatCompletionsConfig::new(mock.base_url()))
            .unwrap();
    assert_eq!(
        provider.list_models().await.unwrap(),
        vec!["mock-model".to_owned()]
    );
    let req = mock.requests().pop().unwrap();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("GET", "/v1/models")
    );
}
