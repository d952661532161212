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
