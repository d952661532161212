#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;
use serde_json::json;

fn env(name: &str) -> Option<String> {
    (name == "TOKEN").then(|| "s3cret".to_owned())
}

#[test]
fn reads_every_reference_key() {
    let tree = json!({
        "mcp_discovery_timeout": 3,
        "mcp_servers": {
            "fs": {
                "command": "npx", "args": ["-y", "server-fs", 7], "env": {"KEY": "${TOKEN}"},
                "cwd": "/tmp", "timeout": 12, "connect_timeout": "5",
                "tools": {"include": ["read"], "exclude": "write", "prompts": false},
                "supports_parallel_tool_calls": true
            },
            "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}},
            "old": {"url": "http://127.0.0.1:1/sse", "transport": "sse", "enabled": "off"},
        }
    });
    let config = McpConfig::from_tree(&tree, &env);
    assert!(config.problems.is_empty(), "{:?}", config.problems);
    assert_eq!(config.discovery_timeout, Duration::from_secs(3));
    let fs = config.get("fs").unwrap();
    assert_eq!(
        fs.transport,
        TransportConfig::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "server-fs".into(), "7".into()],
            env: [("KEY".to_owned(), "s3cret".to_owned())].into(),
            cwd: Some("/tmp".into()),
        }
    );
    assert_eq!(fs.timeout, Duration::from_secs(12));
    assert_eq!(fs.connect_timeout, Duration::from_secs(5));
    assert!(fs.offers("read") && !fs.offers("other"));
    assert!(!fs.prompts && fs.resources && fs.parallel);
    let web = config.get("web").unwrap();
    assert_eq!(web.timeout, DEFAULT_CALL_TIMEOUT);
    assert_eq!(web.connect_timeout, DEFAULT_CONNECT_TIMEOUT);
    assert!(
        matches!(&web.transport, TransportConfig::Http { headers, .. } if headers["Authorization"] == "Bearer s3cret")
    );
    let old = config.get("old").unwrap();
    assert!(!old.enabled);
    assert_eq!(old.transport.kind(), "sse");
    assert_eq!(config.enabled().count(), 2);
}

#[test]
fn exclude_applies_without_include() {
    let c =
        ServerConfig::parse("x", &json!({"command": "x", "tools": {"exclude": ["a"]}})).unwrap();
    assert!(!c.offers("a") && c.offers("b"));
}

#[test]
fn unset_placeholders_stay_and_bad_entries_say_what_to_fix() {
    let tree = json!({"mcp_servers": {
        "a": {"command": "run", "args": ["${MISSING}"]},
        "b": {"args": []},
        "c": {"url": "ftp://x"},
        "d": "nope"
    }});
    let config = McpConfig::from_tree(&tree, &env);
    assert_eq!(config.discovery_timeout, DEFAULT_DISCOVERY_TIMEOUT);
    let TransportConfig::Stdio { args, .. } = &config.get("a").unwrap().transport else {
        panic!()
    };
    assert_eq!(args, &["${MISSING}"]);
    assert_eq!(config.problems.len(), 3);
    assert!(
        config.problems[0].contains("needs `command`"),
        "{:?}",
        config.problems
    );
}

#[test]
fn auth_oauth_reads_the_references_oauth_keys() {
    let tree = json!({
        "mcp_servers": {
            "docs": {
                "url": "https://docs.example/mcp", "auth": "OAuth",
                "oauth": {
                    "client_id": "hermes-cli", "client_secret": "${TOKEN}", "scope": "read write",
                    "redirect_port": 8977, "client_name": "Mine", "timeout": 60,
                    "client_metadata_url": "https://me.example/hermes.json"
                }
            },
            "plain": {"url": "https://plain.example/mcp"},
            "bare": {"url": "https://bare.example/mcp", "auth": "oauth",
                     "oauth": {"client_metadata_url": "http://insecure.example/doc.json"}},
            "unset": {"url": "https://u.example/mcp", "auth": "oauth",
                      "oauth": {"client_secret": "${MISSING}"}},
            "header": {"url": "https://h.example/mcp", "auth": "header"},
        }
    });
    let config = McpConfig::from_tree(&tree, &env);
    let docs = config.get("docs").unwrap().oauth.clone().unwrap();
    assert_eq!(docs.client_id.as_deref(), Some("hermes-cli"));
    assert_eq!(docs.client_secret.as_deref(), Some("s3cret"));
    assert_eq!(docs.scope.as_deref(), Some("read write"));
    assert_eq!(docs.redirect_port, 8977);
    assert_eq!(docs.client_name.as_deref(), Some("Mine"));
    assert_eq!(docs.timeout, Duration::from_secs(60));
    assert_eq!(
        docs.client_metadata_url.as_deref(),
        Some("https://me.example/hermes.json")
    );
    assert!(!format!("{docs:?}").contains("s3cret"));
    let bare = config.get("bare").unwrap().oauth.clone().unwrap();
    assert_eq!(bare.redirect_port, 0);
    assert_eq!(bare.timeout, Duration::from_secs(300));
    // A metadata document must be served over https.
    assert!(bare.client_metadata_url.is_none());
    // An unresolved placeholder is no secret.
    assert!(
        config
            .get("unset")
            .unwrap()
            .oauth
            .clone()
            .unwrap()
            .client_secret
            .is_none()
    );
    assert!(config.get("plain").unwrap().oauth.is_none());
    assert!(config.get("header").unwrap().oauth.is_none());
}
