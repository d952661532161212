//! The `honcho_*` tools, with the reference's schemas and result shapes:
//! `honcho_profile` (read or replace a peer card), `honcho_search` (what was
//! said), `honcho_reasoning` (a synthesized answer), `honcho_context` (the
//! session's snapshot) and `honcho_conclude` (write, list or delete
//! conclusions).

use std::sync::{Arc, LazyLock};

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::{Tool, ToolContext, ToolError, ToolResult};
use serde_json::{Value, json};

use crate::core::{Core, Scope};

/// The schemas the model sees, as the reference declares them.
static SCHEMAS: LazyLock<Vec<Value>> =
    LazyLock::new(|| serde_json::from_str(include_str!("honcho_schemas.json")).unwrap_or_default());

/// The tool names, in the reference's order.
const NAMES: [&str; 5] = [
    "honcho_profile",
    "honcho_search",
    "honcho_reasoning",
    "honcho_context",
    "honcho_conclude",
];

/// Every Honcho tool over `core`.
pub(crate) fn all(core: &Arc<Core>) -> Vec<Arc<dyn Tool>> {
    NAMES
        .iter()
        .map(|name| {
            Arc::new(HonchoTool {
                core: core.clone(),
                name,
            }) as Arc<dyn Tool>
        })
        .collect()
}

/// One of the tools.
struct HonchoTool {
    core: Arc<Core>,
    name: &'static str,
}

impl Tool for HonchoTool {
    fn name(&self) -> &str {
        self.name
    }

    fn toolset(&self) -> &str {
        "memory"
    }

    fn emoji(&self) -> &str {
        "🧠"
    }

    fn schema(&self) -> ToolSchema {
        hermes_tools::declared_schema(&SCHEMAS, self.name)
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let scope = self.core.scope(&ctx.session_id).await.map_err(|e| {
                ToolError::model(format!("Honcho session could not be initialized: {e}"))
            })?;
            let outcome = match self.name {
                "honcho_profile" => profile(&self.core, &scope, &args).await,
                "honcho_search" => search(&self.core, &scope, &args).await,
                "honcho_reasoning" => reasoning(&self.core, &scope, &args).await,
                "honcho_context" => context(&self.core, &scope, &args).await,
                _ => conclude(&self.core, &scope, &args).await,
            };
            outcome
                .map(|v| v.to_string())
                .map_err(|failure| match failure {
                    Failure::Usage(message) => ToolError::model(message),
                    Failure::Api(e) => {
                        ToolError::model(format!("Honcho {} failed: {e}", self.name))
                    }
                })
        })
    }
}

/// Why a call gave no result.
enum Failure {
    /// Arguments the model should fix (said as they are).
    Usage(String),
    /// Honcho refused or could not be reached (said as `Honcho TOOL failed: …`).
    Api(String),
}

impl From<String> for Failure {
    fn from(e: String) -> Self {
        Failure::Api(e)
    }
}

/// A tool's outcome.
type Outcome = Result<Value, Failure>;

/// A usage error.
fn usage(message: impl Into<String>) -> Outcome {
    Err(Failure::Usage(message.into()))
}

/// A string argument, trimmed; empty when absent.
fn text<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).map_or("", str::trim)
}

/// `honcho_profile`: the card, or a new one.
async fn profile(core: &Core, scope: &Scope, args: &Value) -> Outcome {
    let alias = args.get("peer").and_then(Value::as_str);
    let peer = core.peer(scope, alias);
    let view = core.view(scope, &peer);
    let new_card: Vec<String> = match args.get("card") {
        Some(Value::Array(lines)) => lines
            .iter()
            .filter_map(|l| l.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    if !new_card.is_empty() {
        let stored = core
            .api
            .set_card(&view, &new_card)
            .await
            .map_err(|e| Failure::Usage(format!("Failed to update peer card: {e}")))?;
        return Ok(
            json!({"result": format!("Peer card updated ({} facts).", stored.len()), "card": stored}),
        );
    }
    let mut card = core.api.card(&view).await?;
    if card.is_empty() && view.target.is_some_and(|t| t != view.observer) {
        // Some servers keep the card on the peer itself.
        card = core
            .api
            .card(&crate::api::PeerView {
                observer: &peer,
                target: None,
            })
            .await
            .unwrap_or_default();
    }
    if card.is_empty() {
        return Ok(empty_profile(core, alias.unwrap_or("user")));
    }
    Ok(json!({"result": card}))
}

/// Why a card is empty, so the model does not report it as a failure.
fn empty_profile(core: &Core, peer: &str) -> Value {
    let obs = core.settings.observation;
    let (me, others) = if peer == "ai" {
        (obs.ai_observe_me, obs.ai_observe_others)
    } else {
        (obs.user_observe_me, obs.user_observe_others)
    };
    let turn = core.state().turn;
    let mut reasons = Vec::new();
    if !me && !others {
        reasons.push(format!(
            "observation is off for peer '{peer}' in honcho.json"
        ));
    }
    if turn < 2 {
        reasons.push(format!(
            "this session has had {turn} turn(s); a card fills in as Honcho reasons over the conversation"
        ));
    }
    if reasons.is_empty() {
        reasons.push(
            "the card has no facts yet: Honcho builds it over time, and self-hosted Honcho before 3.x has no cards"
                .to_owned(),
        );
    }
    json!({
        "result": "No profile facts available yet.",
        "hint": format!(
            "This is not an error. {}. honcho_reasoning gives a synthesized answer and honcho_search finds what was said.",
            reasons.join("; ")
        ),
    })
}

/// `honcho_search`: ranked excerpts of what was said, within a budget.
async fn search(core: &Core, scope: &Scope, args: &Value) -> Outcome {
    let query = text(args, "query");
    if query.is_empty() {
        return usage("Missing required parameter: query");
    }
    let query: String = query.chars().take(4000).collect();
    let max_tokens = args
        .get("max_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(800)
        .min(2000) as usize;
    let budget = (max_tokens * 4).max(200);
    let limit = (budget / 300).clamp(3, 20);
    let peer = core.peer(scope, args.get("peer").and_then(Value::as_str));
    let found = core.api.search(&query, &peer, limit).await?;
    let mut lines: Vec<String> = Vec::new();
    let mut used = 0;
    for message in &found {
        let content = message["content"].as_str().unwrap_or_default().trim();
        if content.is_empty() {
            continue;
        }
        let author = message["peer_id"]
            .as_str()
            .filter(|a| !a.is_empty())
            .unwrap_or("unknown");
        let who = if author == scope.ai {
            "assistant"
        } else {
            author
        };
        let session = message["session_id"].as_str().unwrap_or_default();
        let label = if session.is_empty() {
            who.to_owned()
        } else {
            format!("{who} · {session}")
        };
        let snippet: String = content.chars().take(1200).collect();
        let entry = format!("[{label}] {snippet}");
        let separator = if lines.is_empty() { 0 } else { 2 };
        let room = budget.saturating_sub(used + separator);
        if room == 0 {
            break;
        }
        if entry.chars().count() > room {
            let cut: String = entry.chars().take(room).collect();
            if !cut.trim_end().is_empty() {
                lines.push(cut.trim_end().to_owned());
            }
            break;
        }
        used += separator + entry.chars().count();
        lines.push(entry);
    }
    if lines.is_empty() {
        return Ok(json!({"result": "No relevant context found."}));
    }
    Ok(json!({"result": lines.join("\n\n")}))
}

/// `honcho_reasoning`: the dialectic agent's answer, uncut.
async fn reasoning(core: &Core, scope: &Scope, args: &Value) -> Outcome {
    let query = text(args, "query");
    if query.is_empty() {
        return usage("Missing required parameter: query");
    }
    let peer = core.peer(scope, args.get("peer").and_then(Value::as_str));
    let level = args
        .get("reasoning_level")
        .and_then(Value::as_str)
        .filter(|l| crate::settings::LEVELS.contains(l));
    let answer = core.dialectic(scope, &peer, query, level, false).await?;
    let answer = if answer.trim().is_empty() {
        "No result from Honcho.".to_owned()
    } else {
        answer
    };
    Ok(json!({"result": answer}))
}

/// `honcho_context`: summary, representation, card and the last messages.
async fn context(core: &Core, scope: &Scope, args: &Value) -> Outcome {
    let peer = core.peer(scope, args.get("peer").and_then(Value::as_str));
    let view = core.view(scope, &peer);
    let ctx = core
        .api
        .session_context(&scope.session, Some(&view))
        .await?;
    let mut parts = Vec::new();
    if let Some(summary) = ctx
        .pointer("/summary/content")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        parts.push(format!("## Summary\n{summary}"));
    }
    if let Some(rep) = ctx["peer_representation"]
        .as_str()
        .filter(|s| !s.is_empty())
    {
        parts.push(format!("## Representation\n{rep}"));
    }
    let card = crate::api::card_lines(&ctx["peer_card"]);
    if !card.is_empty() {
        parts.push(format!("## Card\n{}", card.join("\n")));
    }
    if let Some(messages) = ctx["messages"].as_array().filter(|m| !m.is_empty()) {
        let recent: Vec<String> = messages[messages.len().saturating_sub(5)..]
            .iter()
            .map(|m| {
                let role = m["peer_id"].as_str().unwrap_or("unknown");
                let content: String = m["content"]
                    .as_str()
                    .unwrap_or_default()
                    .chars()
                    .take(200)
                    .collect();
                format!("  [{role}] {content}")
            })
            .collect();
        parts.push(format!("## Recent messages\n{}", recent.join("\n")));
    }
    if parts.is_empty() {
        return Ok(json!({"result": "No context available yet."}));
    }
    Ok(json!({"result": parts.join("\n\n")}))
}

/// `honcho_conclude`: exactly one of create, delete or list.
async fn conclude(core: &Core, scope: &Scope, args: &Value) -> Outcome {
    let conclusion = text(args, "conclusion");
    let delete_id = text(args, "delete_id");
    let list = args.get("list").and_then(Value::as_bool).unwrap_or(false);
    let query = text(args, "query");
    let chosen = [!conclusion.is_empty(), !delete_id.is_empty(), list];
    if chosen.iter().filter(|c| **c).count() != 1 {
        return usage("Exactly one of conclusion, delete_id, or list must be provided.");
    }
    if !query.is_empty() && !list {
        return usage("query is only valid when list is true.");
    }
    let alias = args.get("peer").and_then(Value::as_str).unwrap_or("user");
    let peer = core.peer(scope, Some(alias));
    let (observer, observed) = core.conclusion_pair(scope, &peer);
    if list {
        let query = (!query.is_empty()).then_some(query);
        let found = core
            .api
            .conclusions(&observer, &observed, query, 20)
            .await?;
        let shown: Vec<Value> = found
            .iter()
            .map(|c| json!({"id": c["id"], "content": c["content"]}))
            .collect();
        return Ok(json!({"conclusions": shown}));
    }
    if !delete_id.is_empty() {
        return match core.api.delete_conclusion(delete_id).await {
            Ok(()) => Ok(json!({"result": format!("Conclusion {delete_id} deleted.")})),
            Err(e) => usage(format!("Failed to delete conclusion {delete_id}: {e}")),
        };
    }
    match core
        .api
        .create_conclusion(&observer, &observed, conclusion, &scope.session)
        .await
    {
        Ok(()) => Ok(json!({"result": format!("Conclusion saved for {alias}: {conclusion}")})),
        Err(e) => usage(format!("Failed to save conclusion: {e}")),
    }
}
