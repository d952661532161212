//! Tools that come and go mid-session (MCP servers): re-read before each
//! model request whenever their source's generation moves on.

use std::sync::Arc;

use hermes_tools::DynamicTools;

use super::Agent;

/// The agent's view of a dynamic tool source.
pub(crate) struct DynamicState {
    source: Arc<dyn DynamicTools>,
    /// The generation last applied (`None` before the first sync).
    applied: Option<u64>,
    /// Names this source registered, removed again on the next change.
    names: Vec<String>,
}

impl DynamicState {
    pub(crate) fn new(source: Arc<dyn DynamicTools>) -> Self {
        Self {
            source,
            applied: None,
            names: Vec::new(),
        }
    }
}

impl Agent {
    /// Whether tools come from a dynamic source.
    pub fn has_dynamic_tools(&self) -> bool {
        self.dynamic.is_some()
    }

    /// Replaces the dynamic source (its tools leave the registry at once;
    /// the new source's arrive before the next model request).
    pub fn set_dynamic_tools(&mut self, source: Option<Arc<dyn DynamicTools>>) {
        if let Some(old) = self.dynamic.take() {
            for name in old.names {
                self.tools.unregister(&name);
            }
        }
        self.dynamic = source.map(DynamicState::new);
    }

    /// Brings the registry up to date with the dynamic source. The first call
    /// waits (bounded) for start-up discovery; built-in tools always keep
    /// their names.
    pub(crate) async fn sync_dynamic_tools(&mut self) {
        let Some(state) = self.dynamic.as_mut() else {
            return;
        };
        if state.applied.is_none() {
            state.source.ready().await;
        }
        let generation = state.source.generation();
        if state.applied == Some(generation) {
            return;
        }
        for name in state.names.drain(..) {
            self.tools.unregister(&name);
        }
        for tool in state.source.tools(self.compressor.context_length()) {
            if self.tools.get(tool.name()).is_none() {
                state.names.push(tool.name().to_owned());
                self.tools.register(tool);
            }
        }
        state.applied = Some(generation);
    }
}
