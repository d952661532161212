use hermes_state::{Config, Env};

use super::*;

fn cfg(yaml: &str) -> Config {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("config.yaml");
    std::fs::write(&p, yaml).unwrap();
    Config::load(&p, &Env::default()).unwrap()
}

#[test]
fn nothing_configured_says_how_to_configure() {
    let err = resolve(&Config::default(), &Env::default(), None, None, "/h").unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("OPENROUTER_API_KEY")
            && msg.contains("/h/config.yaml")
            && msg.contains("base_url"),
        "{msg}"
    );
}

#[test]
fn auto_prefers_config_base_url_then_keys() {
    let rt = resolve(
        &cfg("model:\n  base_url: http://x:1/v1/\n  default: m\n"),
        &Env::default(),
        None,
        None,
        "/h",
    )
    .unwrap();
    assert_eq!(
        (
            rt.provider.as_str(),
            rt.base_url.as_str(),
            rt.model.as_deref()
        ),
        ("custom", "http://x:1/v1", Some("m"))
    );
    let env = Env::from_pairs([("OPENROUTER_API_KEY", "sk-or"), ("OPENAI_API_KEY", "sk-oa")]);
    let rt = resolve(&Config::default(), &env, None, None, "/h").unwrap();
    assert_eq!(rt.provider, "openrouter");
    assert_eq!(rt.api_key.as_deref(), Some("sk-or"));
    assert_eq!(rt.base_url, "https://openrouter.ai/api/v1");
}

#[test]
fn flags_override_config_and_aliases_work() {
    let env = Env::from_pairs([
        ("CUSTOM_BASE_URL", "http://127.0.0.1:9/v1"),
        ("OPENAI_API_KEY", "k"),
    ]);
    let rt = resolve(
        &cfg("model:\n  provider: openai\n  default: gpt\n"),
        &env,
        Some("ollama"),
        Some("llama3"),
        "/h",
    )
    .unwrap();
    assert_eq!(rt.provider, "custom");
    assert_eq!(rt.base_url, "http://127.0.0.1:9/v1");
    assert_eq!(rt.model.as_deref(), Some("llama3"));
}

#[test]
fn missing_key_and_unknown_provider_are_explained() {
    let err = resolve(
        &Config::default(),
        &Env::default(),
        Some("openai"),
        None,
        "/h",
    )
    .unwrap_err();
    assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
    let err = resolve(
        &Config::default(),
        &Env::default(),
        Some("bogus"),
        None,
        "/h",
    )
    .unwrap_err();
    assert!(err.to_string().contains("openrouter"), "{err}");
    let err = resolve(
        &Config::default(),
        &Env::default(),
        Some("custom"),
        None,
        "/h",
    )
    .unwrap_err();
    assert!(matches!(err, SetupError::MissingBaseUrl { .. }));
}

#[test]
fn config_credentials_do_not_leak_to_another_provider() {
    let c =
        cfg("model:\n  provider: custom\n  base_url: http://mine/v1\n  api_key: secret-custom\n");
    let env = Env::from_pairs([("OPENROUTER_API_KEY", "sk-or")]);
    let rt = resolve(&c, &env, Some("openrouter"), None, "/h").unwrap();
    assert_eq!(rt.base_url, "https://openrouter.ai/api/v1");
    assert_eq!(rt.api_key.as_deref(), Some("sk-or"));
    assert!(!format!("{rt:?}").contains("sk-or"));
}

#[test]
fn local_takes_a_gguf_path_as_the_model() {
    let rt = resolve(
        &Config::default(),
        &Env::default(),
        Some("local"),
        Some("/m/x.gguf"),
        "/h",
    )
    .unwrap();
    assert_eq!(
        (rt.provider.as_str(), rt.model.as_deref()),
        ("local", Some("/m/x.gguf"))
    );
    let rt = resolve(
        &cfg("model:\n  provider: local\n"),
        &Env::default(),
        None,
        None,
        "/h",
    )
    .unwrap();
    assert_eq!((rt.provider.as_str(), rt.model), ("local", None));
}

#[test]
fn fallback_providers_resolve_in_order_with_their_keys() {
    let c = cfg(
        "fallback_providers:\n  - provider: openrouter\n    model: a/b\n  - provider: custom\n    model: local-m\n    base_url: http://127.0.0.1:9/v1/\n    key_env: MY_KEY\n",
    );
    let env = Env::from_pairs([("OPENROUTER_API_KEY", "sk-or"), ("MY_KEY", "k2")]);
    let f = fallbacks(&c, &env).unwrap();
    assert_eq!(f.len(), 2);
    assert_eq!(
        (
            f[0].provider.as_str(),
            f[0].api_key.as_deref(),
            f[0].model.as_deref()
        ),
        ("openrouter", Some("sk-or"), Some("a/b"))
    );
    assert_eq!(
        (f[1].base_url.as_str(), f[1].api_key.as_deref()),
        ("http://127.0.0.1:9/v1", Some("k2"))
    );
    let bad = cfg("fallback_providers:\n  - provider: custom\n");
    assert!(
        fallbacks(&bad, &Env::default())
            .unwrap_err()
            .contains("fallback_providers[0] needs a 'model'")
    );
}

#[test]
fn user_defined_providers_and_api_modes() {
    let c = cfg(
        "providers:\n  mygw:\n    name: My gateway\n    api: http://gw.local:4000/v1/\n    key_env: GW_KEY\n    default_model: gw-model\n  myanthropic:\n    base_url: https://proxy.example/anthropic\n",
    );
    let env = Env::from_pairs([("GW_KEY", "k-gw")]);
    let rt = resolve(&c, &env, Some("mygw"), None, "/h").unwrap();
    assert_eq!(
        (
            rt.provider.as_str(),
            rt.base_url.as_str(),
            rt.api_key.as_deref(),
            rt.model.as_deref(),
            rt.api_mode
        ),
        (
            "mygw",
            "http://gw.local:4000/v1",
            Some("k-gw"),
            Some("gw-model"),
            ApiMode::ChatCompletions
        )
    );
    let rt = resolve(&c, &env, Some("myanthropic"), Some("claude"), "/h").unwrap();
    assert_eq!(
        rt.api_mode,
        ApiMode::AnthropicMessages,
        "an /anthropic suffix means the Messages API"
    );

    let env = Env::from_pairs([("ANTHROPIC_API_KEY", "sk-ant")]);
    let rt = resolve(&Config::default(), &env, Some("anthropic"), None, "/h").unwrap();
    assert_eq!(
        (rt.base_url.as_str(), rt.api_mode),
        ("https://api.anthropic.com", ApiMode::AnthropicMessages)
    );
    let explicit = cfg(
        "model:\n  provider: custom\n  base_url: http://localhost:4000\n  api_mode: anthropic_messages\n",
    );
    let rt = resolve(&explicit, &Env::default(), None, Some("m"), "/h").unwrap();
    assert_eq!(rt.api_mode, ApiMode::AnthropicMessages);
    let stale = cfg(
        "model:\n  provider: custom\n  base_url: http://localhost:4000/v1\n  api_mode: codex_responses\n",
    );
    let rt = resolve(&stale, &Env::default(), None, Some("m"), "/h").unwrap();
    assert_eq!(
        rt.api_mode,
        ApiMode::ChatCompletions,
        "a plain custom relay is not forced onto the Responses API"
    );
    let named = cfg(
        "model:\n  provider: relay\n  api_mode: codex_responses\nproviders:\n  relay:\n    base_url: http://localhost:4000/v1\n",
    );
    let rt = resolve(&named, &Env::default(), None, Some("m"), "/h").unwrap();
    assert_eq!(rt.api_mode, ApiMode::CodexResponses);
    let env = Env::from_pairs([("OPENAI_API_KEY", "sk")]);
    let rt = resolve(&Config::default(), &env, Some("openai"), None, "/h").unwrap();
    assert_eq!(rt.api_mode, ApiMode::CodexResponses);
    let rt = resolve(
        &Config::default(),
        &Env::from_pairs([("GROQ_API_KEY", "g")]),
        Some("groq"),
        Some("llama"),
        "/h",
    )
    .unwrap();
    assert_eq!(
        (rt.base_url.as_str(), rt.api_mode),
        ("https://api.groq.com/openai/v1", ApiMode::ChatCompletions)
    );
}

#[test]
fn bedrock_endpoint_follows_the_region_and_needs_aws_credentials() {
    let keys = [
        ("AWS_ACCESS_KEY_ID", "AKID"),
        ("AWS_SECRET_ACCESS_KEY", "secret"),
    ];
    let env = Env::from_pairs(keys.into_iter().chain([("AWS_REGION", "eu-west-3")]));
    let rt = resolve(&Config::default(), &env, Some("aws-bedrock"), None, "/h").unwrap();
    assert_eq!(
        (rt.provider.as_str(), rt.base_url.as_str(), rt.api_mode),
        (
            "bedrock",
            "https://bedrock-runtime.eu-west-3.amazonaws.com",
            ApiMode::BedrockConverse
        )
    );
    assert!(rt.model.is_some());
    // config.yaml's bedrock.region wins over the environment.
    let rt = resolve(
        &cfg("bedrock:\n  region: ap-south-1\n"),
        &env,
        Some("bedrock"),
        None,
        "/h",
    )
    .unwrap();
    assert_eq!(
        rt.base_url,
        "https://bedrock-runtime.ap-south-1.amazonaws.com"
    );
    let bare = Env::from_pairs(keys);
    let rt = resolve(&Config::default(), &bare, Some("bedrock"), None, "/h").unwrap();
    assert_eq!(
        rt.base_url,
        "https://bedrock-runtime.us-east-1.amazonaws.com"
    );
    let token = Env::from_pairs([("AWS_BEARER_TOKEN_BEDROCK", "tok")]);
    assert!(resolve(&Config::default(), &token, Some("bedrock"), None, "/h").is_ok());

    let err = resolve(
        &Config::default(),
        &Env::default(),
        Some("bedrock"),
        None,
        "/h",
    )
    .unwrap_err();
    assert_eq!(err, SetupError::NoAwsCredentials { home: "/h".into() });
    assert!(err.to_string().contains("/h/.env"), "{err}");
}

#[test]
fn envelope_prompt_cache_only_for_claude_and_kimi_behind_openrouter() {
    let rt = |url: &str, model: &str| Endpoint {
        provider: "openrouter".into(),
        base_url: url.into(),
        api_key: None,
        model: Some(model.into()),
        api_mode: ApiMode::ChatCompletions,
    };
    let none = Config::default();
    let or = "https://openrouter.ai/api/v1";
    assert_eq!(
        envelope_cache(&rt(or, "anthropic/claude-sonnet-4.5"), &none),
        Some(hermes_llm::CacheTtl::FiveMinutes)
    );
    assert!(envelope_cache(&rt(or, "moonshotai/kimi-k2.6"), &none).is_some());
    assert_eq!(envelope_cache(&rt(or, "openai/gpt-4o"), &none), None);
    assert_eq!(
        envelope_cache(&rt("http://127.0.0.1:8080/v1", "claude-x"), &none),
        None
    );
    let hour = cfg("prompt_caching:\n  cache_ttl: 1h\n");
    assert_eq!(
        envelope_cache(&rt(or, "anthropic/claude-opus-4.7"), &hour),
        Some(hermes_llm::CacheTtl::OneHour)
    );
}
