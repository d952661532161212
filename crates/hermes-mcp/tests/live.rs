//! The client against real servers nobody here wrote (skipped when
//! `HERMES_MCP_NPM` / `HERMES_MCP_PYTHON` do not point at them; `.ci/run` sets both).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hermes_mcp::{HubOptions, Link, McpConfig, McpHub, McpTool};
use hermes_tools::{Tool, ToolContext};
use serde_json::{Value, json};

fn npm() -> Option<PathBuf> {
    std::env::var_os("HERMES_MCP_NPM").map(PathBuf::from)
}

fn hub(home: &std::path::Path, servers: Value) -> McpHub {
    let config = McpConfig::from_tree(&json!({ "mcp_servers": servers }), &|_| None);
    assert!(config.problems.is_empty(), "{:?}", config.problems);
    McpHub::start(
        &config,
        HubOptions {
            hermes_home: home.to_owned(),
            env: std::env::vars().collect::<BTreeMap<_, _>>(),
            reserved: vec!["read_file".into()],
            oauth_prompt: None,
        },
    )
}

fn find(hub: &McpHub, name: &str) -> Arc<McpTool> {
    hub.tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| {
            let names: Vec<String> = hub.tools().iter().map(|t| t.name().to_owned()).collect();
            panic!("{name} not offered; have {names:?}")
        })
}

async fn call(tool: &McpTool, args: Value) -> Value {
    let ctx = ToolContext::new("/", "test");
    serde_json::from_str(&tool.call(args, &ctx).await.unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio() {
    let Some(npm) = npm() else { return };
    let home = tempfile::tempdir().unwrap();
    let js = npm.join("@modelcontextprotocol/server-everything/dist/index.js");
    let hub = hub(
        home.path(),
        json!({"everything": {"command": "node", "args": [js, "stdio"]}}),
    );
    hub.wait_settled(Duration::from_secs(30)).await;
    let status = hub.statuses();
    assert_eq!(status[0].state, "connected", "{status:?}");
    let sum = find(&hub, "mcp__everything__get_sum");
    assert_eq!(sum.schema().parameters["type"], "object");
    let out = call(&sum, json!({"a": 2, "b": 3})).await;
    assert!(out["result"].as_str().unwrap().contains("5"), "{out}");
    let structured = call(
        &find(&hub, "mcp__everything__get_structured_content"),
        json!({"location": "New York"}),
    )
    .await;
    assert!(
        structured.get("structuredContent").is_some() || structured["result"].is_object(),
        "{structured}"
    );
    let image = call(&find(&hub, "mcp__everything__get_tiny_image"), json!({})).await;
    assert!(
        image["result"].as_str().unwrap().contains("MEDIA:"),
        "{image}"
    );
    let listed = call(&find(&hub, "mcp__everything__list_prompts"), json!({})).await;
    assert!(
        listed["prompts"].as_array().is_some_and(|p| !p.is_empty()),
        "{listed}"
    );
    let resources = call(&find(&hub, "mcp__everything__list_resources"), json!({})).await;
    let uri = resources["resources"][0]["uri"]
        .as_str()
        .unwrap()
        .to_owned();
    let read = call(
        &find(&hub, "mcp__everything__read_resource"),
        json!({"uri": uri}),
    )
    .await;
    assert!(read.get("result").is_some(), "{read}");
    let log = std::fs::read_to_string(home.path().join("logs/mcp-stderr.log")).unwrap();
    assert!(log.contains("starting MCP server 'everything'"), "{log}");
    hub.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_start_is_reported() {
    let home = tempfile::tempdir().unwrap();
    let hub = hub(
        home.path(),
        json!({"dead": {"command": "sh", "args": ["-c", "exit 3"], "connect_timeout": 5}}),
    );
    hub.wait_settled(Duration::from_secs(10)).await;
    let status = hub.statuses();
    assert!(status[0].state.starts_with("failed"), "{status:?}");
    assert!(hub.tools().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_times_out_at_connect_timeout() {
    let home = tempfile::tempdir().unwrap();
    let hub = hub(
        home.path(),
        json!({"mute": {"command": "sleep", "args": ["30"], "connect_timeout": 1}}),
    );
    let started = std::time::Instant::now();
    hub.wait_settled(Duration::from_secs(10)).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let Link::Down(why) = hub.servers_link("mute") else {
        panic!()
    };
    assert!(why.contains("connect_timeout"), "{why}");
}
