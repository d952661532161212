//! The models that do side work: `auxiliary.compression` writes compression
//! summaries, `auxiliary.title_generation` titles sessions; the main model
//! when nothing is configured there.

use hermes_agent::Route;
use hermes_llm::api_mode;

use crate::endpoint::Endpoint;
use crate::error::SessionError;
use crate::services::Services;

/// The endpoint `auxiliary.compression` names: its own provider (or `auto`, the main
/// one), model and endpoint. `None` when nothing differs from the main model.
pub fn summarizer_endpoint(
    services: &Services,
    main: &Endpoint,
) -> Result<Option<Endpoint>, SessionError> {
    task_endpoint(
        services,
        main,
        &services.setup().config.sections.auxiliary.compression,
    )
}

/// The endpoint an `auxiliary.<task>` section names, or `None` when it names
/// nothing that differs from the main model.
pub fn task_endpoint(
    services: &Services,
    main: &Endpoint,
    task: &hermes_state::settings::AuxiliaryTask,
) -> Result<Option<Endpoint>, SessionError> {
    let setup = services.setup();
    if task.is_unset() {
        return Ok(None);
    }
    let provider = task
        .provider
        .as_deref()
        .filter(|p| !p.eq_ignore_ascii_case("auto"));
    let model = task.model.as_deref();
    let mut ep = match (task.base_url.as_deref(), provider) {
        (Some(url), _) => Endpoint {
            provider: provider.unwrap_or("custom").to_owned(),
            base_url: url.trim_end_matches('/').to_owned(),
            api_key: None,
            model: None,
            api_mode: api_mode::resolve(None, None, url),
        },
        (None, Some(p)) => setup.endpoint(Some(p), model)?,
        (None, None) => main.clone(),
    };
    if let Some(key) = &task.api_key {
        ep.api_key = Some(key.clone());
    } else if ep.api_key.is_none() && ep.base_url == main.base_url {
        ep.api_key.clone_from(&main.api_key);
    }
    ep.model = model
        .map(str::to_owned)
        .or(ep.model)
        .or_else(|| main.model.clone());
    Ok(Some(ep))
}

/// The summarizer's provider and model, or `None` for the main model. A
/// summarizer that cannot be set up is `Err`: the caller warns and the main
/// model summarizes instead.
pub fn summarizer(services: &Services, main: &Endpoint) -> Result<Option<Route>, SessionError> {
    match summarizer_endpoint(services, main)? {
        Some(ep) if ep.provider != "local" => Ok(Some(Route {
            provider: services.remote(&ep)?,
            model: ep.model.unwrap_or_default(),
        })),
        _ => Ok(None),
    }
}

/// The provider and model that look at images: `auxiliary.vision`, else the
/// session's own; `None` when that is the embedded model (it cannot see).
pub fn vision(
    services: &Services,
    main: &Endpoint,
    main_route: &Route,
) -> Result<Option<Route>, SessionError> {
    let task = &services.setup().config.sections.auxiliary.vision;
    Ok(match task_endpoint(services, main, task)? {
        Some(ep) if ep.provider != "local" => Some(Route {
            provider: services.remote(&ep)?,
            model: ep.model.unwrap_or_default(),
        }),
        _ if main.provider == "local" => None,
        _ => Some(main_route.clone()),
    })
}

/// The vision route for a session on `main`, building the main route only
/// when it is needed.
pub fn vision_for(services: &Services, main: &Endpoint) -> Option<Route> {
    let task = &services.setup().config.sections.auxiliary.vision;
    match task_endpoint(services, main, task).ok()? {
        Some(ep) if ep.provider != "local" => Some(Route {
            provider: services.remote(&ep).ok()?,
            model: ep.model.unwrap_or_default(),
        }),
        _ if main.provider == "local" => None,
        _ => Some(Route {
            provider: services.remote(main).ok()?,
            model: main.model.clone().unwrap_or_default(),
        }),
    }
}

/// A model route that answers about images (`vision_analyze`).
#[derive(Debug)]
pub struct VisionRoute(pub Route);

impl hermes_web::vision::VisionModel for VisionRoute {
    fn name(&self) -> String {
        self.0.model.clone()
    }

    fn look<'a>(
        &'a self,
        data_url: &'a str,
        prompt: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let request = hermes_llm::ChatRequest {
                model: self.0.model.clone(),
                messages: vec![hermes_protocol::Message::user_with_images(
                    prompt,
                    vec![data_url.to_owned()],
                )],
                max_tokens: Some(2000),
                temperature: Some(0.1),
                ..hermes_llm::ChatRequest::default()
            };
            let cancel = tokio_util::sync::CancellationToken::new();
            let done = tokio::time::timeout(
                std::time::Duration::from_secs(120),
                hermes_llm::complete(self.0.provider.as_ref(), &request, &cancel),
            )
            .await;
            match done {
                Ok(Ok(done)) => Ok(done.message.text().to_owned()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => {
                    cancel.cancel();
                    Err("the vision model took longer than 120s".into())
                }
            }
        })
    }
}

/// The provider and model that title sessions: `auxiliary.title_generation`,
/// else the session's own.
pub fn titler(
    services: &Services,
    main: &Endpoint,
    main_route: &Route,
) -> Result<Route, SessionError> {
    let task = &services.setup().config.sections.auxiliary.title_generation;
    match task_endpoint(services, main, task)? {
        Some(ep) if ep.provider != "local" => Ok(Route {
            provider: services.remote(&ep)?,
            model: ep.model.unwrap_or_default(),
        }),
        _ => Ok(main_route.clone()),
    }
}
