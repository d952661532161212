//! How the CLI builds subagents for `delegate_task`: the parent's provider,
//! model and fallbacks, a budget from `delegation.max_iterations`, and a
//! session of their own in `state.db` (source `subagent`, linked to the parent).

use std::path::PathBuf;
use std::sync::Arc;

use hermes_agent::delegate::{ChildSpec, DelegateTool, DelegationSettings, SubagentFactory};
use hermes_agent::{Agent, AgentOptions, RetryPolicy};
use hermes_llm::Provider;
use hermes_state::{Config, NewSession, SessionDb};

use crate::history::{DbStore, now};
use crate::runtime::Runtime;

/// The `delegate_task` tool for the user's agent, configured from `delegation:`.
pub(crate) fn delegate_tool(
    config: &Config,
    provider: &Arc<dyn Provider>,
    rt: &Runtime,
    fallbacks: &[(Arc<dyn Provider>, String)],
    db_path: PathBuf,
    retry: RetryPolicy,
) -> DelegateTool {
    let mut routes = vec![(provider.clone(), rt.model.clone().unwrap_or_default())];
    routes.extend(fallbacks.iter().cloned());
    let factory = CliSubagentFactory {
        routes,
        provider_name: rt.provider.clone(),
        base_url: rt.base_url.clone(),
        db_path: Some(db_path),
        context_length: config.model.context_length,
        retry,
    };
    DelegateTool::new(
        DelegationSettings::from_value(config.get("delegation")),
        Arc::new(factory),
    )
}

/// Builds children that talk to the same models as the parent.
pub(crate) struct CliSubagentFactory {
    /// The primary provider and model, then the fallbacks, in order.
    pub(crate) routes: Vec<(Arc<dyn Provider>, String)>,
    /// Provider name and base URL, recorded with usage.
    pub(crate) provider_name: String,
    pub(crate) base_url: String,
    /// Where the parent's history lives; `None` when history is off.
    pub(crate) db_path: Option<PathBuf>,
    pub(crate) context_length: Option<u64>,
    pub(crate) retry: RetryPolicy,
}

impl SubagentFactory for CliSubagentFactory {
    fn build(&self, spec: ChildSpec) -> Result<Agent, String> {
        let Some((provider, model)) = self.routes.first() else {
            return Err("no model is configured for subagents".into());
        };
        let session_id = crate::session_id::new_session_id();
        let options = AgentOptions {
            model: model.clone(),
            max_turns: spec.max_turns,
            max_tokens: None,
            temperature: None,
            cwd: spec.cwd.clone(),
            session_id: session_id.clone(),
            homes: spec.homes.clone(),
        };
        let mut agent = Agent::new(
            provider.clone(),
            spec.tools,
            options,
            Some(spec.system_prompt.clone()),
            Vec::new(),
        );
        for (fallback, fallback_model) in self.routes.iter().skip(1) {
            agent.add_fallback(fallback.clone(), fallback_model.clone());
        }
        agent.set_retry_policy(self.retry.clone());
        if let Some(tokens) = self.context_length {
            agent.set_context_length(tokens);
        }
        // Without a readable store the child still runs, unrecorded, as the parent does.
        if let Some(mut db) = self.db_path.as_ref().and_then(|p| SessionDb::open(p).ok()) {
            db.create_session(&NewSession {
                id: session_id.clone(),
                source: "subagent".into(),
                model: Some(model.clone()),
                model_config: Some(serde_json::json!({"max_iterations": spec.max_turns})),
                system_prompt: Some(spec.system_prompt),
                parent_session_id: Some(spec.parent_session_id),
                cwd: Some(spec.cwd.display().to_string()),
                started_at: now(),
            })
            .map_err(|e| e.to_string())?;
            agent.set_store(Box::new(DbStore::new(
                db,
                session_id,
                model.clone(),
                self.provider_name.clone(),
                self.base_url.clone(),
            )));
        }
        Ok(agent)
    }
}
