//! Tool search: when the MCP tools' schemas would take more than
//! `tools.tool_search.threshold_pct` of the context window, the model sees
//! three bridge tools (`tool_search`, `tool_describe`, `tool_call`) instead,
//! and loads the others on demand. Built-in tools are never deferred.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::{Tool, ToolContext, ToolError, ToolResult, error_json};
use serde_json::{Value, json};

/// The bridge tools' names (reserved).
pub const BRIDGE_NAMES: [&str; 3] = ["tool_search", "tool_describe", "tool_call"];

/// Rough characters per token for schema JSON, as the reference estimates.
const CHARS_PER_TOKEN: f64 = 4.0;

/// `tools.tool_search`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSearchConfig {
    /// `auto`, `on` or `off`.
    pub enabled: String,
    /// Share of the context window (0–100) at which `auto` turns it on.
    pub threshold_pct: f64,
    /// Hits returned when the model gives no `limit`.
    pub search_default_limit: usize,
    /// Most hits the model may ask for.
    pub max_search_limit: usize,
}

impl Default for ToolSearchConfig {
    fn default() -> Self {
        Self {
            enabled: "auto".into(),
            threshold_pct: 10.0,
            search_default_limit: 5,
            max_search_limit: 20,
        }
    }
}

impl ToolSearchConfig {
    /// Reads `tools.tool_search` (a bool or a mapping) from the config tree;
    /// anything unreadable falls back to the defaults.
    pub fn from_tree(tree: &Value) -> Self {
        let raw = tree.get("tools").and_then(|t| t.get("tool_search"));
        let mut config = Self::default();
        match raw {
            Some(Value::Bool(false)) => config.enabled = "off".into(),
            Some(Value::Object(map)) => {
                let enabled = map
                    .get("enabled")
                    .map(|v| match v {
                        Value::String(s) => s.trim().to_ascii_lowercase(),
                        other => other.to_string(),
                    })
                    .unwrap_or_else(|| "auto".into());
                config.enabled = match enabled.as_str() {
                    "true" | "1" | "yes" | "on" => "on",
                    "false" | "0" | "no" | "off" => "off",
                    _ => "auto",
                }
                .into();
                let number = |key: &str| {
                    map.get(key).and_then(|v| match v {
                        Value::Number(n) => n.as_f64(),
                        Value::String(s) => s.trim().parse().ok(),
                        _ => None,
                    })
                };
                if let Some(pct) = number("threshold_pct") {
                    config.threshold_pct = pct.clamp(0.0, 100.0);
                }
                if let Some(max) = number("max_search_limit") {
                    config.max_search_limit = (max as i64).clamp(1, 50) as usize;
                }
                let default = number("search_default_limit").map_or(5, |n| n as i64);
                config.search_default_limit =
                    default.clamp(1, config.max_search_limit as i64) as usize;
            }
            _ => {}
        }
        config
    }

    /// Whether `deferrable_tokens` of schemas call for the bridge.
    pub fn activates(&self, deferrable_tokens: usize, context_length: u64) -> bool {
        match self.enabled.as_str() {
            "off" => false,
            _ if deferrable_tokens == 0 => false,
            "on" => true,
            _ if context_length == 0 => deferrable_tokens >= 20_000,
            _ => deferrable_tokens as f64 >= context_length as f64 * self.threshold_pct / 100.0,
        }
    }
}

/// Estimated tokens of the schemas as they go on the wire.
pub fn estimate_tokens(tools: &[Arc<dyn Tool>]) -> usize {
    let chars: usize = tools
        .iter()
        .map(|t| {
            let s = t.schema();
            json!({"type": "function", "function": {"name": s.name, "description": s.description, "parameters": s.parameters}})
                .to_string()
                .chars()
                .count()
        })
        .sum();
    (chars as f64 / CHARS_PER_TOKEN).ceil() as usize
}

/// The deferred tools behind the bridge.
pub struct Catalog {
    tools: Vec<Arc<dyn Tool>>,
    tokens: Vec<Vec<String>>,
    config: ToolSearchConfig,
}

impl Catalog {
    fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// The best `limit` matches for `query` by BM25, falling back to a name
    /// substring match when no term scores.
    fn search(&self, query: &str, limit: usize) -> Vec<&Arc<dyn Tool>> {
        let terms = tokenize(query);
        if terms.is_empty() || limit == 0 {
            return Vec::new();
        }
        let n = self.tools.len() as f64;
        let avg = self.tokens.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
        let mut df: HashMap<&str, usize> = HashMap::new();
        for doc in &self.tokens {
            let mut seen: Vec<&str> = doc.iter().map(String::as_str).collect();
            seen.sort_unstable();
            seen.dedup();
            for t in seen {
                *df.entry(t).or_default() += 1;
            }
        }
        let (k1, b) = (1.5, 0.75);
        let mut scored: Vec<(f64, usize)> = self
            .tokens
            .iter()
            .enumerate()
            .filter_map(|(i, doc)| {
                let dl = doc.len() as f64;
                let score: f64 = terms
                    .iter()
                    .filter_map(|q| {
                        let df = *df.get(q.as_str())? as f64;
                        let tf = doc.iter().filter(|t| *t == q).count() as f64;
                        (tf > 0.0).then(|| {
                            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                            idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl / avg.max(1.0)))
                        })
                    })
                    .sum();
                (score > 0.0).then_some((score, i))
            })
            .collect();
        if scored.is_empty() {
            let q = query.to_lowercase();
            scored = self
                .tools
                .iter()
                .enumerate()
                .filter(|(_, t)| t.name().to_lowercase().contains(&q))
                .map(|(i, _)| (0.1, i))
                .collect();
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored
            .into_iter()
            .take(limit)
            .map(|(_, i)| &self.tools[i])
            .collect()
    }
}

fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn search_text(tool: &dyn Tool) -> String {
    let schema = tool.schema();
    let params: Vec<String> = schema
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    format!(
        "{} {} {}",
        schema.name.replace(['_', '.', '-', ':'], " "),
        schema.description,
        params.join(" ")
    )
}

/// The three bridge tools over `deferred`.
pub fn bridge(deferred: Vec<Arc<dyn Tool>>, config: ToolSearchConfig) -> Vec<Arc<dyn Tool>> {
    let tokens = deferred
        .iter()
        .map(|t| tokenize(&search_text(t.as_ref())))
        .collect();
    let catalog = Arc::new(Catalog {
        tools: deferred,
        tokens,
        config,
    });
    BRIDGE_NAMES
        .iter()
        .map(|name| {
            Arc::new(Bridge {
                name,
                catalog: catalog.clone(),
            }) as Arc<dyn Tool>
        })
        .collect()
}

/// A string argument, trimmed (`""` when missing).
fn text_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("").trim()
}

struct Bridge {
    name: &'static str,
    catalog: Arc<Catalog>,
}

impl Bridge {
    fn search(&self, args: &Value) -> String {
        let query = text_arg(args, "query");
        if query.is_empty() {
            return error_json("query is required");
        }
        let config = &self.catalog.config;
        let limit = args
            .get("limit")
            .and_then(Value::as_i64)
            .map_or(config.search_default_limit, |l| {
                l.clamp(1, config.max_search_limit as i64) as usize
            });
        let matches: Vec<Value> = self
            .catalog
            .search(query, limit)
            .into_iter()
            .map(|t| {
                let description: String = t.schema().description.chars().take(400).collect();
                json!({"name": t.name(), "source": "mcp", "source_name": t.toolset(), "description": description})
            })
            .collect();
        json!({"query": query, "total_available": self.catalog.tools.len(), "matches": matches})
            .to_string()
    }

    fn describe(&self, args: &Value) -> String {
        let name = text_arg(args, "name");
        if name.is_empty() {
            return error_json("name is required");
        }
        match self.catalog.get(name) {
            Some(tool) => {
                let s = tool.schema();
                json!({"name": name, "description": s.description, "parameters": s.parameters})
                    .to_string()
            }
            None => error_json(&format!(
                "'{name}' is not a deferrable tool. If you see it in the tools list already, \
                 call it directly; otherwise check the spelling against tool_search."
            )),
        }
    }

    async fn invoke(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let name = text_arg(&args, "name");
        if name.is_empty() {
            return Ok(error_json("tool_call requires a 'name' argument"));
        }
        if BRIDGE_NAMES.contains(&name) {
            return Ok(error_json(&format!(
                "tool_call cannot invoke '{name}' (it is itself a bridge tool)"
            )));
        }
        let inner = match args.get("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                Ok(v) => v,
                Err(e) => {
                    return Ok(error_json(&format!(
                        "tool_call 'arguments' is not valid JSON: {e}"
                    )));
                }
            },
            Some(v) => v.clone(),
        };
        if !inner.is_object() {
            return Ok(error_json("tool_call 'arguments' must be an object"));
        }
        let Some(tool) = self.catalog.get(name) else {
            return Ok(error_json(&format!(
                "'{name}' is not a deferrable tool. If it appears in the model-facing tools \
                 list already, call it directly instead of via tool_call."
            )));
        };
        tool.call(inner, ctx).await
    }
}

impl Tool for Bridge {
    fn name(&self) -> &str {
        self.name
    }

    fn toolset(&self) -> &str {
        "tool_search"
    }

    fn emoji(&self) -> &str {
        "🔎"
    }

    fn schema(&self) -> ToolSchema {
        let count = self.catalog.tools.len();
        let (description, parameters) = match self.name {
            "tool_search" => (
                format!(
                    "Search {count} additional tools that are loaded on demand. Returns up to \
                     ``limit`` matches with name and description. Follow with `tool_describe` to \
                     load a tool's full parameter schema, then `tool_call` to invoke it. Tools \
                     listed at the top of this system prompt are already available and do not \
                     need to be searched."
                ),
                json!({"type": "object", "properties": {
                    "query": {"type": "string", "description": "Keywords describing the capability you need (e.g. 'create github issue')."},
                    "limit": {"type": "integer", "description": "Maximum number of results to return. Default 5."}
                }, "required": ["query"]}),
            ),
            "tool_describe" => (
                "Load the full JSON schema for one tool returned by `tool_search`. Required \
                 before `tool_call` if the tool's parameters are unknown."
                    .to_owned(),
                json!({"type": "object", "properties": {
                    "name": {"type": "string", "description": "Exact tool name (as returned by tool_search)."}
                }, "required": ["name"]}),
            ),
            _ => (
                "Invoke a deferred tool by name with the given arguments. Argument shape matches \
                 the tool's schema (see `tool_describe`). Policy, hooks, and approvals run \
                 exactly as for any directly-listed tool."
                    .to_owned(),
                json!({"type": "object", "properties": {
                    "name": {"type": "string", "description": "Exact tool name to invoke."},
                    "arguments": {"type": "object", "description": "Arguments for the tool, matching its schema."}
                }, "required": ["name", "arguments"]}),
            ),
        };
        ToolSchema {
            name: self.name.to_owned(),
            description,
            parameters,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            match self.name {
                "tool_search" => Ok(self.search(&args)),
                "tool_describe" => Ok(self.describe(&args)),
                "tool_call" => self.invoke(args, ctx).await,
                other => Err(ToolError::model(format!("unknown bridge tool {other}"))),
            }
        })
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
