//! The `holographic` memory provider: a local fact store
//! (`memory_store.db`) the model fills and queries with `fact_store` and
//! rates with `fact_feedback`, recalled into each turn by keyword search.
//! Settings: `plugins.hermes-memory-store` in config.yaml, as the
//! reference's plugin reads them.
//!
//! `probe`, `related`, `reason` and `contradict` use the store's HRR
//! vectors, as the reference does with numpy installed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use hermes_protocol::{Message, Role, ToolSchema};
use hermes_state::memory::facts::{FactSettings, FactStore};
use regex::Regex;
use serde_json::{Value, json};

use crate::memory_provider::MemoryProvider;
use crate::{Tool, ToolContext, ToolError, ToolResult};

/// `plugins.hermes-memory-store`.
#[derive(Debug, Clone, PartialEq)]
pub struct HolographicSettings {
    /// The database (`$HERMES_HOME/memory_store.db`).
    pub db_path: PathBuf,
    /// Facts from the user's own words at session end.
    pub auto_extract: bool,
    /// Trust, floor and decay.
    pub facts: FactSettings,
}

impl HolographicSettings {
    /// Reads the section (`section`: its value, or null) for the Hermes
    /// home `home`; `~` in `db_path` is `user_home`.
    pub fn from_section(section: &Value, home: &Path, user_home: Option<&Path>) -> Self {
        let number = |key: &str, default: f64| {
            section
                .get(key)
                .and_then(|v| v.as_f64().or_else(|| v.as_str()?.trim().parse().ok()))
                .filter(|n| n.is_finite())
                .unwrap_or(default)
        };
        let home_text = home.display().to_string();
        let db_path = section
            .get("db_path")
            .and_then(Value::as_str)
            .map(|p| {
                let p = p
                    .replace("${HERMES_HOME}", &home_text)
                    .replace("$HERMES_HOME", &home_text);
                crate::paths::resolve(home, &p, user_home)
            })
            .unwrap_or_else(|| home.join("memory_store.db"));
        // The reference tests the value's truthiness: any non-empty string is on.
        let auto_extract = match section.get("auto_extract") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Number(n)) => n.as_f64() != Some(0.0),
            _ => false,
        };
        Self {
            db_path,
            auto_extract,
            facts: FactSettings {
                default_trust: number("default_trust", 0.5).clamp(0.0, 1.0),
                min_trust_threshold: number("min_trust_threshold", 0.3),
                temporal_decay_half_life: number("temporal_decay_half_life", 0.0),
                hrr_dim: number("hrr_dim", 1024.0).clamp(16.0, 65_536.0) as usize,
                hrr_weight: number("hrr_weight", 0.3).max(0.0),
            },
        }
    }
}

/// The provider: one open store.
pub struct Holographic {
    store: Mutex<FactStore>,
    settings: HolographicSettings,
}

impl std::fmt::Debug for Holographic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Holographic")
            .field("db_path", &self.settings.db_path)
            .finish()
    }
}

impl Holographic {
    /// Opens the store `settings` name.
    pub fn open(settings: HolographicSettings) -> Result<Self, String> {
        let store = FactStore::open(&settings.db_path, settings.facts)?;
        Ok(Self {
            store: Mutex::new(store),
            settings,
        })
    }

    fn store(&self) -> std::sync::MutexGuard<'_, FactStore> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One `fact_store` call: its JSON result or the error message.
    fn fact_store(&self, args: &Value) -> Result<Value, String> {
        let text = |key: &str| args.get(key).and_then(Value::as_str);
        let required =
            |key: &str| text(key).ok_or_else(|| format!("Missing required argument: '{key}'"));
        let number = |key: &str| args.get(key).and_then(Value::as_f64);
        let limit = |default: usize| {
            args.get("limit")
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| *n > 0)
                .unwrap_or(default)
        };
        let category = text("category");
        let store = self.store();
        let results = |rows: Vec<Value>| json!({"count": rows.len(), "results": rows});
        Ok(match required("action")? {
            "add" => {
                let id = store.add(
                    required("content")?,
                    category.unwrap_or("general"),
                    text("tags").unwrap_or(""),
                )?;
                json!({"fact_id": id, "status": "added"})
            }
            "search" => {
                let min_trust = number("min_trust")
                    .filter(|n| *n != 0.0)
                    .unwrap_or(self.settings.facts.min_trust_threshold);
                results(store.search(required("query")?, category, min_trust, limit(10)))
            }
            "probe" => results(store.probe(required("entity")?, category, limit(10))?),
            "related" => results(store.related(required("entity")?, category, limit(10))?),
            "reason" => {
                let entities: Vec<&str> = args
                    .get("entities")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if entities.is_empty() {
                    return Err("reason requires 'entities' list".into());
                }
                results(store.reason(&entities, category, limit(10))?)
            }
            "contradict" => results(store.contradict(category, 0.3, limit(10))?),
            "update" => {
                let id = fact_id(args)?;
                let updated = store.update(
                    id,
                    text("content"),
                    number("trust_delta"),
                    text("tags"),
                    category,
                )?;
                json!({"updated": updated})
            }
            "remove" => json!({"removed": store.remove(fact_id(args)?)?}),
            "list" => {
                let facts = store.list(category, number("min_trust").unwrap_or(0.0), limit(10))?;
                json!({"facts": facts, "count": facts.len()})
            }
            other => return Err(format!("Unknown action: {other}")),
        })
    }

    fn fact_feedback(&self, args: &Value) -> Result<Value, String> {
        let id = fact_id(args)?;
        let action = args
            .get("action")
            .and_then(Value::as_str)
            .ok_or("Missing required argument: 'action'")?;
        self.store()
            .feedback(id, action == "helpful")
            .map_err(|e| format!("Missing required argument: {e}"))
    }
}

fn fact_id(args: &Value) -> Result<i64, String> {
    let value = args
        .get("fact_id")
        .ok_or("Missing required argument: 'fact_id'")?;
    value
        .as_i64()
        .or_else(|| value.as_str()?.trim().parse().ok())
        .ok_or_else(|| format!("invalid literal for int(): {value}"))
}

/// What the user said that is worth a fact: (pattern, category).
static EXTRACTORS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (
            r"(?i)\bI\s+(?:prefer|like|love|use|want|need)\s+(.+)",
            "user_pref",
        ),
        (
            r"(?i)\bmy\s+(?:favorite|preferred|default)\s+\w+\s+is\s+(.+)",
            "user_pref",
        ),
        (r"(?i)\bI\s+(?:always|never|usually)\s+(.+)", "user_pref"),
        (
            r"(?i)\bwe\s+(?:decided|agreed|chose)\s+(?:to\s+)?(.+)",
            "project",
        ),
        (
            r"(?i)\bthe\s+project\s+(?:uses|needs|requires)\s+(.+)",
            "project",
        ),
    ]
    .into_iter()
    .filter_map(|(p, c)| Some((Regex::new(p).ok()?, c)))
    .collect()
});

impl MemoryProvider for Holographic {
    fn name(&self) -> &str {
        "holographic"
    }

    fn system_prompt_block(&self) -> String {
        let total = self.store().count();
        if total == 0 {
            "# Holographic Memory\nActive. Empty fact store — proactively add facts the user would expect you to remember.\nUse fact_store(action='add') to store durable structured facts about people, projects, preferences, decisions.\nUse fact_feedback to rate facts after using them (trains trust scores).".into()
        } else {
            format!(
                "# Holographic Memory\nActive. {total} facts stored with entity resolution and trust scoring.\nUse fact_store to search, probe entities, reason across entities, or add facts.\nUse fact_feedback to rate facts after using them (trains trust scores)."
            )
        }
    }

    fn prefetch(&self, query: &str, _session_id: &str) -> Result<String, String> {
        if query.trim().is_empty() {
            return Ok(String::new());
        }
        let found = self
            .store()
            .search(query, None, self.settings.facts.min_trust_threshold, 5);
        if found.is_empty() {
            return Ok(String::new());
        }
        let lines: Vec<String> = found
            .iter()
            .map(|f| {
                format!(
                    "- [{:.1}] {}",
                    f["trust_score"].as_f64().unwrap_or(0.0),
                    f["content"].as_str().unwrap_or("")
                )
            })
            .collect();
        Ok(format!("## Holographic Memory\n{}", lines.join("\n")))
    }

    fn tools(self: Arc<Self>) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(FactTool {
                provider: self.clone(),
                feedback: false,
            }),
            Arc::new(FactTool {
                provider: self,
                feedback: true,
            }),
        ]
    }

    fn on_memory_write(&self, action: &str, target: &str, content: &str) {
        if action == "add" && !content.trim().is_empty() {
            let category = if target == "user" {
                "user_pref"
            } else {
                "general"
            };
            let _ = self.store().add(content, category, "");
        }
    }

    fn on_session_end(&self, messages: &[Message]) {
        if !self.settings.auto_extract {
            return;
        }
        let store = self.store();
        for message in messages.iter().filter(|m| m.role == Role::User) {
            let text = message.text();
            if text.chars().count() < 10 {
                continue;
            }
            let kept: String = text.chars().take(400).collect();
            for wanted in ["user_pref", "project"] {
                if EXTRACTORS
                    .iter()
                    .any(|(re, category)| *category == wanted && re.is_match(text))
                {
                    let _ = store.add(&kept, wanted, "");
                }
            }
        }
    }
}

/// `fact_store` or `fact_feedback`.
struct FactTool {
    provider: Arc<Holographic>,
    feedback: bool,
}

static SCHEMAS: LazyLock<Vec<Value>> = LazyLock::new(|| {
    serde_json::from_str(include_str!("holographic_schemas.json")).unwrap_or_default()
});

impl Tool for FactTool {
    fn name(&self) -> &str {
        if self.feedback {
            "fact_feedback"
        } else {
            "fact_store"
        }
    }

    fn toolset(&self) -> &str {
        "memory"
    }

    fn emoji(&self) -> &str {
        "🧠"
    }

    fn schema(&self) -> ToolSchema {
        crate::declared_schema(&SCHEMAS, self.name())
    }

    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let provider = self.provider.clone();
            let feedback = self.feedback;
            let outcome = tokio::task::spawn_blocking(move || {
                if feedback {
                    provider.fact_feedback(&args)
                } else {
                    provider.fact_store(&args)
                }
            })
            .await
            .map_err(|e| ToolError::model(format!("fact store failed: {e}")))?;
            outcome.map(|v| v.to_string()).map_err(ToolError::model)
        })
    }
}

#[cfg(test)]
#[path = "holographic_tests.rs"]
mod tests;
