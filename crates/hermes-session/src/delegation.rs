//! Subagents for `delegate_task`: the parent's provider, model and fallbacks
//! (or the endpoint `delegation:` pins), a budget from
//! `delegation.max_iterations`, and a session of their own in the store
//! (source `subagent`, linked to the parent).

use std::sync::Arc;

use hermes_agent::delegate::{ChildSpec, DelegateTool, DelegationSettings, SubagentFactory};
use hermes_agent::{Agent, AgentOptions, RetryPolicy};
use hermes_llm::Provider;
use hermes_state::NewSession;

use crate::endpoint::Endpoint;
use crate::error::SessionError;
use crate::services::Services;
use crate::store::{SessionRecorder, SessionStore, now};

/// The `delegate_task` tool for a session's agent, configured from `delegation:`.
/// Children use the parent's model unless `delegation.base_url`, `.provider` or
/// `.model` pin another (the parent's fallbacks stay behind it).
pub(crate) fn delegate_tool(
    services: &Services,
    parent: (&Arc<dyn Provider>, &Endpoint),
    fallbacks: &[(Arc<dyn Provider>, String)],
    retry: RetryPolicy,
) -> DelegateTool {
    let (provider, ep) = parent;
    let config = &services.setup().config;
    // A broken `delegation:` block must not stop the session from starting:
    // delegate_task reports it when it is called, as the reference does.
    let pinned = child_endpoint(services, ep).and_then(|pinned| match pinned {
        Some(pinned) => services.remote(&pinned).map(|remote| (pinned, remote)),
        None => Ok((ep.clone(), provider.clone())),
    });
    let (child_ep, child_provider, misconfigured) = match pinned {
        Ok((pinned, remote)) => (pinned, remote, None),
        Err(e) => (ep.clone(), provider.clone(), Some(e.to_string())),
    };
    let mut routes = vec![(child_provider, child_ep.model.clone().unwrap_or_default())];
    routes.extend(fallbacks.iter().cloned());
    let factory = Subagents {
        routes,
        provider_name: child_ep.provider.clone(),
        base_url: child_ep.base_url.clone(),
        store: services.store(),
        context_length: config.model.context_length,
        retry,
        misconfigured,
        hooks: services.hooks(),
        setup: services.setup().clone(),
    };
    DelegateTool::new(
        DelegationSettings::from_section(&config.sections.delegation),
        Arc::new(factory),
    )
}

/// The endpoint `delegation:` pins, if any: `base_url` (+ `api_key`, `api_mode`)
/// for a direct OpenAI-compatible server, `provider` (+ `model`) resolved like
/// `--provider`, or just `model` on the parent's provider.
fn child_endpoint(
    services: &Services,
    parent: &Endpoint,
) -> Result<Option<Endpoint>, SessionError> {
    let setup = services.setup();
    let d = &setup.config.sections.delegation;
    let model = d.model.clone();
    if let Some(base_url) = d.base_url.clone() {
        let api_key = d
            .api_key
            .clone()
            .or_else(|| setup.env.get("OPENAI_API_KEY").map(str::to_owned));
        let api_mode = hermes_llm::api_mode::resolve(d.api_mode.as_deref(), None, &base_url);
        return Ok(Some(Endpoint {
            provider: "custom".into(),
            base_url,
            api_key,
            model: model.or_else(|| parent.model.clone()),
            api_mode,
        }));
    }
    if let Some(provider) = &d.provider {
        let pinned = setup
            .endpoint(Some(provider), model.as_deref())
            .map_err(|e| SessionError::Spec(format!("delegation.provider {provider}: {e}")))?;
        return Ok(Some(pinned));
    }
    Ok(model.map(|model| Endpoint {
        model: Some(model),
        ..parent.clone()
    }))
}

/// Builds children that talk to the same models as the parent.
struct Subagents {
    /// The primary provider and model, then the fallbacks, in order.
    routes: Vec<(Arc<dyn Provider>, String)>,
    /// Provider name and base URL, recorded with usage.
    provider_name: String,
    base_url: String,
    /// Where the parent's history lives; `None` when history is off.
    store: Option<Arc<dyn SessionStore>>,
    context_length: Option<u64>,
    retry: RetryPolicy,
    /// Why the configured subagent endpoint cannot be used, if it cannot.
    misconfigured: Option<String>,
    /// The process's hooks: a child's tool calls pass them as the parent's do.
    hooks: Arc<hermes_tools::hooks::Hooks>,
    /// For a child's own container under the docker backend.
    setup: crate::Setup,
}

impl SubagentFactory for Subagents {
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
        let mut builder = Agent::builder(provider.clone(), spec.tools, options)
            .system_prompt(Some(spec.system_prompt.clone()))
            .approvals(spec.approvals)
            .hidden_env(spec.hidden_env)
            .environment(crate::environment::for_subagent(
                &self.setup,
                &spec.environment,
                &session_id,
            ))
            .hooks(self.hooks.clone())
            .platform("subagent")
            .retry_policy(self.retry.clone())
            .context_length(self.context_length);
        for (fallback, fallback_model) in self.routes.iter().skip(1) {
            builder = builder.fallback(fallback.clone(), fallback_model.clone());
        }
        // Without a store the child still runs, unrecorded, as the parent does.
        if let Some(store) = &self.store {
            store
                .create_session(&NewSession {
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
                .map_err(|e| e.0)?;
            builder = builder.store(Box::new(SessionRecorder::new(
                store.clone(),
                &session_id,
                model,
                &self.provider_name,
                &self.base_url,
            )));
        }
        Ok(builder.build())
    }
}
