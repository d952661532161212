//! How the CLI builds subagents for `delegate_task`: the parent's provider,
//! model and fallbacks, a budget from `delegation.max_iterations`, and a
//! session of their own in `state.db` (source `subagent`, linked to the parent).

use std::path::PathBuf;
use std::sync::Arc;

use hermes_agent::delegate::{ChildSpec, DelegateTool, DelegationSettings, SubagentFactory};
use hermes_agent::{Agent, AgentOptions, RetryPolicy};
use hermes_llm::Provider;
use hermes_state::{NewSession, SessionDb};

use crate::history::{DbStore, now};
use crate::runtime::Runtime;
use crate::setup::Setup;

/// The `delegate_task` tool for the user's agent, configured from `delegation:`.
/// Children use the parent's model unless `delegation.base_url`, `.provider` or
/// `.model` pin another (the parent's fallbacks stay behind it).
pub(crate) fn delegate_tool(
    setup: &Setup,
    parent: (&Arc<dyn Provider>, &Runtime),
    fallbacks: &[(Arc<dyn Provider>, String)],
    retry: RetryPolicy,
) -> DelegateTool {
    let (provider, rt) = parent;
    let config = &setup.config;
    // A broken `delegation:` block must not stop the session from starting:
    // delegate_task reports it when it is called, as the reference does.
    let pinned = child_runtime(setup, rt).and_then(|pinned| match pinned {
        Some(pinned) => crate::chat::remote_provider(&pinned, &setup.home, config, &setup.env)
            .map(|remote| (pinned, remote)),
        None => Ok((rt.clone(), provider.clone())),
    });
    let (child_rt, child_provider, misconfigured) = match pinned {
        Ok((pinned, remote)) => (pinned, remote, None),
        Err(e) => (rt.clone(), provider.clone(), Some(format!("{e:#}"))),
    };
    let mut routes = vec![(child_provider, child_rt.model.clone().unwrap_or_default())];
    routes.extend(fallbacks.iter().cloned());
    let factory = CliSubagentFactory {
        routes,
        provider_name: child_rt.provider.clone(),
        base_url: child_rt.base_url.clone(),
        db_path: Some(setup.home.state_db()),
        context_length: config.model.context_length,
        retry,
        misconfigured,
    };
    DelegateTool::new(
        DelegationSettings::from_value(config.get("delegation")),
        Arc::new(factory),
    )
}

/// The endpoint `delegation:` pins, if any: `base_url` (+ `api_key`, `api_mode`)
/// for a direct OpenAI-compatible server, `provider` (+ `model`) resolved like
/// `--provider`, or just `model` on the parent's provider.
fn child_runtime(setup: &Setup, parent: &Runtime) -> anyhow::Result<Option<Runtime>> {
    let text = |key: &str| {
        setup
            .config
            .get(&format!("delegation.{key}"))
            .and_then(serde_json::Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let model = text("model");
    if let Some(base_url) = text("base_url") {
        let api_key =
            text("api_key").or_else(|| setup.env.get("OPENAI_API_KEY").map(str::to_owned));
        let api_mode = hermes_llm::api_mode::resolve(text("api_mode").as_deref(), None, &base_url);
        return Ok(Some(Runtime {
            provider: "custom".into(),
            base_url,
            api_key,
            model: model.or_else(|| parent.model.clone()),
            api_mode,
        }));
    }
    if let Some(provider) = text("provider") {
        let pinned = setup
            .runtime(Some(&provider), model.as_deref())
            .map_err(|e| anyhow::anyhow!("delegation.provider {provider}: {e}"))?;
        return Ok(Some(pinned));
    }
    Ok(model.map(|model| Runtime {
        model: Some(model),
        ..parent.clone()
    }))
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
    /// Why the configured subagent endpoint cannot be used, if it cannot.
    pub(crate) misconfigured: Option<String>,
}

impl SubagentFactory for CliSubagentFactory {
    fn build(&self, spec: ChildSpec) -> Result<Agent, String> {
        if let Some(problem) = &self.misconfigured {
            return Err(format!(
                "{problem} (fix the delegation: section of config.yaml)"
            ));
        }
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
                // `_delegate_from` is the reference's marker: subagent runs stay out of
                // session pickers and go with their parent when it is deleted.
                model_config: Some(serde_json::json!({
                    "max_iterations": spec.max_turns,
                    "_delegate_from": spec.parent_session_id,
                })),
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
