//! A memory provider that is an executable plugin (`provides_memory_provider:
//! NAME` in its plugin.yaml): each provider method is one JSON-RPC call
//! (`memory/prefetch`, `memory/sync_turn`, …) over the plugin channel. The
//! agent calls providers from the blocking pool, where these calls wait on
//! the plugin; the system prompt block is asked once at start
//! (`memory/initialize`), since the prompt is built on the async side.

use std::sync::Arc;

use hermes_protocol::Message;
use hermes_tools::hooks::PluginHook;
use hermes_tools::memory_provider::MemoryProvider;
use serde_json::{Value, json};

/// The provider a plugin answers for.
pub(crate) struct PluginMemory {
    name: String,
    plugin: Arc<PluginHook>,
    runtime: tokio::runtime::Handle,
    system_prompt: String,
}

impl PluginMemory {
    /// Starts the plugin and asks for its system prompt block.
    pub(crate) async fn start(
        name: &str,
        plugin: Arc<PluginHook>,
        platform: &str,
    ) -> Result<Self, String> {
        let reply = plugin
            .ask(
                "memory/initialize",
                json!({"provider": name, "platform": platform}),
            )
            .await?;
        let system_prompt = text_of(&reply, "system_prompt");
        Ok(Self {
            name: name.to_owned(),
            plugin,
            runtime: tokio::runtime::Handle::current(),
            system_prompt,
        })
    }

    /// One call, waited for on this (blocking-pool) thread.
    fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        self.runtime.block_on(self.plugin.ask(method, params))
    }

    /// A call whose answer does not matter.
    fn tell(&self, method: &str, params: Value) {
        let _ = self.call(method, params);
    }
}

/// A reply's text: a bare string, or the `key` field of an object.
fn text_of(reply: &Value, key: &str) -> String {
    match reply {
        Value::String(s) => s.clone(),
        Value::Object(map) => map
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        _ => String::new(),
    }
}

impl MemoryProvider for PluginMemory {
    fn name(&self) -> &str {
        &self.name
    }

    fn system_prompt_block(&self) -> String {
        self.system_prompt.clone()
    }

    fn prefetch(&self, query: &str, session_id: &str) -> Result<String, String> {
        let reply = self.call(
            "memory/prefetch",
            json!({"query": query, "session_id": session_id}),
        )?;
        Ok(text_of(&reply, "context"))
    }

    fn queue_prefetch(&self, query: &str, session_id: &str) {
        self.tell(
            "memory/queue_prefetch",
            json!({"query": query, "session_id": session_id}),
        );
    }

    fn sync_turn(&self, user: &str, assistant: &str, session_id: &str) -> Result<(), String> {
        self.call(
            "memory/sync_turn",
            json!({"user_content": user, "assistant_content": assistant, "session_id": session_id}),
        )
        .map(|_| ())
    }

    fn on_turn_start(&self, turn: u32, message: &str) {
        self.tell(
            "memory/on_turn_start",
            json!({"turn_number": turn, "message": message}),
        );
    }

    fn on_session_end(&self, messages: &[Message]) {
        self.tell("memory/on_session_end", json!({"messages": messages}));
    }

    fn on_session_switch(&self, new_session_id: &str, parent_session_id: &str, reset: bool) {
        self.tell(
            "memory/on_session_switch",
            json!({"new_session_id": new_session_id, "parent_session_id": parent_session_id, "reset": reset}),
        );
    }

    fn on_pre_compress(&self, messages: &[Message]) -> String {
        self.call("memory/on_pre_compress", json!({"messages": messages}))
            .map(|reply| text_of(&reply, "context"))
            .unwrap_or_default()
    }

    fn on_memory_write(&self, action: &str, target: &str, content: &str) {
        self.tell(
            "memory/on_memory_write",
            json!({"action": action, "target": target, "content": content}),
        );
    }

    fn on_delegation(&self, task: &str, result: &str, child_session_id: &str) {
        self.tell(
            "memory/on_delegation",
            json!({"task": task, "result": result, "child_session_id": child_session_id}),
        );
    }

    fn shutdown(&self) {
        self.tell("memory/shutdown", json!({}));
    }
}
