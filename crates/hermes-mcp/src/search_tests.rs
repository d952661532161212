#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;

struct Fake {
    name: String,
    description: String,
}

impl Tool for Fake {
    fn name(&self) -> &str {
        &self.name
    }
    fn toolset(&self) -> &str {
        "mcp-gh"
    }
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: json!({"type": "object", "properties": {"title": {"type": "string"}}}),
        }
    }
    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move { Ok(json!({"called": self.name, "args": args}).to_string()) })
    }
}

fn tools() -> Vec<Arc<dyn Tool>> {
    [
        (
            "mcp__gh__create_issue",
            "Create a new GitHub issue in a repository",
        ),
        ("mcp__gh__list_pulls", "List pull requests"),
        ("mcp__gh__merge_pull", "Merge a pull request"),
    ]
    .into_iter()
    .map(|(n, d)| {
        Arc::new(Fake {
            name: n.into(),
            description: d.into(),
        }) as Arc<dyn Tool>
    })
    .collect()
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

#[test]
fn config_reads_bool_and_mapping_shapes() {
    let off = ToolSearchConfig::from_tree(&json!({"tools": {"tool_search": false}}));
    assert_eq!(off.enabled, "off");
    let on = ToolSearchConfig::from_tree(
        &json!({"tools": {"tool_search": {"enabled": true, "threshold_pct": 250, "search_default_limit": 99, "max_search_limit": 7}}}),
    );
    assert_eq!(
        on,
        ToolSearchConfig {
            enabled: "on".into(),
            threshold_pct: 100.0,
            search_default_limit: 7,
            max_search_limit: 7
        }
    );
    assert_eq!(
        ToolSearchConfig::from_tree(&json!({})),
        ToolSearchConfig::default()
    );
}

#[test]
fn activation_follows_the_threshold() {
    let auto = ToolSearchConfig::default();
    assert!(!auto.activates(0, 1000));
    assert!(!auto.activates(99, 1000));
    assert!(auto.activates(100, 1000));
    assert!(auto.activates(20_000, 0));
    let off = ToolSearchConfig {
        enabled: "off".into(),
        ..auto.clone()
    };
    assert!(!off.activates(1_000_000, 1));
    let on = ToolSearchConfig {
        enabled: "on".into(),
        ..auto
    };
    assert!(on.activates(1, 1_000_000));
    assert!(estimate_tokens(&tools()) > 50);
}

#[tokio::test]
async fn search_describe_and_call_reach_the_deferred_tool() {
    let bridge = bridge(tools(), ToolSearchConfig::default());
    let names: Vec<&str> = bridge.iter().map(|t| t.name()).collect();
    assert_eq!(names, BRIDGE_NAMES);
    assert!(
        bridge[0]
            .schema()
            .description
            .starts_with("Search 3 additional tools")
    );
    let ctx = ToolContext::new("/", "s");
    let found = parse(
        &bridge[0]
            .call(json!({"query": "create issue"}), &ctx)
            .await
            .unwrap(),
    );
    assert_eq!(found["total_available"], 3);
    assert_eq!(found["matches"][0]["name"], "mcp__gh__create_issue");
    assert_eq!(found["matches"][0]["source_name"], "mcp-gh");
    let pulls = parse(
        &bridge[0]
            .call(json!({"query": "pull", "limit": 1}), &ctx)
            .await
            .unwrap(),
    );
    assert_eq!(pulls["matches"].as_array().unwrap().len(), 1);
    let described = parse(
        &bridge[1]
            .call(json!({"name": "mcp__gh__merge_pull"}), &ctx)
            .await
            .unwrap(),
    );
    assert_eq!(
        described["parameters"]["properties"]["title"]["type"],
        "string"
    );
    let called = parse(
        &bridge[2]
            .call(
                json!({"name": "mcp__gh__create_issue", "arguments": "{\"title\": \"x\"}"}),
                &ctx,
            )
            .await
            .unwrap(),
    );
    assert_eq!(
        called,
        json!({"called": "mcp__gh__create_issue", "args": {"title": "x"}})
    );
    let refused = parse(
        &bridge[2]
            .call(json!({"name": "terminal", "arguments": {}}), &ctx)
            .await
            .unwrap(),
    );
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("not a deferrable tool")
    );
}
