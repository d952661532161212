//! `context.engine` (the reference's key; `compression.engine` too): the
//! built-in compressor (`compressor`, the default) or a context engine an
//! enabled plugin provides (`provides_context_engine: NAME` in its
//! plugin.yaml), asked over JSON-RPC with `context/compress`.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use hermes_agent::compress::engine::{ContextEngine, EngineRequest};
use hermes_protocol::Message;
use hermes_tools::hooks::PluginHook;
use serde_json::{Value, json};

use crate::setup::Setup;
use crate::spec::Notice;

/// A plugin's context engine.
struct PluginEngine {
    name: String,
    plugin: Arc<PluginHook>,
}

impl ContextEngine for PluginEngine {
    fn name(&self) -> &str {
        &self.name
    }

    fn compress<'a>(
        &'a self,
        request: EngineRequest<'a>,
    ) -> BoxFuture<'a, Result<Vec<Message>, String>> {
        Box::pin(async move {
            let params = json!({
                "messages": request.messages,
                "trigger": request.trigger,
                "focus_topic": request.focus,
                "memory_context": request.memory_context,
                "session_id": request.session_id,
                "current_tokens": request.current_tokens,
                "context_length": request.context_length,
            });
            let reply = self.plugin.ask("context/compress", params).await?;
            let messages = match reply {
                Value::Object(mut map) => map.remove("messages").unwrap_or(Value::Null),
                other => other,
            };
            serde_json::from_value(messages)
                .map_err(|e| format!("its reply is not a list of messages: {e}"))
        })
    }
}

/// The engine the configuration names; `None` for the built-in compressor
/// (and, with a warning, for an engine no enabled plugin provides).
pub(crate) fn open(setup: &Setup, notices: &mut Vec<Notice>) -> Option<Arc<dyn ContextEngine>> {
    let raw = &setup.config.raw;
    let name = ["/context/engine", "/compression/engine"]
        .iter()
        .find_map(|key| raw.pointer(key).and_then(Value::as_str))
        .map(str::trim)
        .filter(|n| !n.is_empty() && !matches!(*n, "compressor" | "auto" | "builtin"))?;
    match crate::plugins::context_engine_plugin(setup, name) {
        Some(plugin) => Some(Arc::new(PluginEngine {
            name: name.to_owned(),
            plugin,
        })),
        None => {
            notices.push(Notice::Warning(format!(
                "context engine '{name}' is not provided by any enabled plugin \
                 (`provides_context_engine: {name}` in its plugin.yaml, then \
                 `hermes plugins enable`); the built-in compressor is used"
            )));
            None
        }
    }
}
