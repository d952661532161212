//! One webhook delivery carried out: the agent's run on the rendered prompt
//! in a session of its own (source `webhook`), and the answer sent where the
//! route says.

use hermes_protocol::{Event, Op};
use hermes_session::cron::deliver::Target;
use hermes_session::{SessionManager, SessionSpec};
use hermes_state::session_db::SessionRouting;
use serde_json::{Map, Value, json};

use super::routes::{Deliver, Route};
use super::template;

/// What the agent was asked, and for whom.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Job {
    /// The route's name (the route itself is looked up again on replay).
    #[serde(skip)]
    pub route: Route,
    /// The route's name.
    pub route_name: String,
    /// Its event type.
    pub event: String,
    /// The delivery's id (one session per delivery).
    pub delivery_id: String,
    /// The rendered prompt.
    pub prompt: String,
    /// The body, for templated `deliver_extra` values.
    pub payload: Value,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The session it ran in.
    pub session_id: String,
    /// The answer, or why there is none.
    pub text: Result<String, String>,
}

/// The rows a webhook session is stored with, as the reference keys them.
fn routing(job: &Job) -> SessionRouting {
    let route = &job.route.name;
    let chat_id = format!("webhook:{route}:{}", job.delivery_id);
    let user_id = format!("webhook:{route}");
    let origin = json!({
        "platform": "webhook",
        "chat_id": chat_id,
        "chat_name": format!("webhook/{route}"),
        "chat_type": "webhook",
        "user_id": user_id,
        "user_name": route,
    });
    SessionRouting {
        session_key: format!("agent:main:webhook:webhook:{chat_id}:{user_id}"),
        chat_id: Some(chat_id),
        chat_type: Some("webhook".to_owned()),
        thread_id: None,
        user_id: Some(user_id),
        display_name: Some(format!("webhook/{route}")),
        origin_json: Some(origin.to_string()),
    }
}

/// Runs the agent on `job`'s prompt in a fresh session and ends it.
pub async fn answer(manager: &SessionManager, cwd: &std::path::Path, job: &Job) -> Answer {
    let mut spec = SessionSpec::new("webhook", cwd.to_path_buf());
    spec.skills.clone_from(&job.route.skills);
    spec.routing = Some(routing(job));
    let mut conv = match manager.start(spec).await {
        Ok(conv) => conv,
        Err(e) => {
            return Answer {
                session_id: String::new(),
                text: Err(e.to_string()),
            };
        }
    };
    let session_id = conv.info().session_id;
    let Ok(id) = conv.submit(Op::UserInput {
        text: job.prompt.clone(),
    }) else {
        return Answer {
            session_id,
            text: Err("the session closed".to_owned()),
        };
    };
    let text = loop {
        let Some(event) = conv.next_event().await else {
            break Err("the session stopped".to_owned());
        };
        if event.submission != id {
            continue;
        }
        match event.event {
            Event::TurnComplete { final_text, .. } if final_text.trim().is_empty() => {
                break Err("the agent gave no answer".to_owned());
            }
            Event::TurnComplete { final_text, .. } => break Ok(final_text),
            Event::Error { message } => break Err(message),
            _ => {}
        }
    };
    let _ = conv.shutdown("webhook_complete").await;
    Answer { session_id, text }
}

/// A `deliver_extra` value rendered with the body (the reference templates them too).
fn extra(route: &Route, payload: &Value, key: &str) -> Option<String> {
    let raw = match route.deliver_extra.get(key)? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let text = template::render(&raw, payload, "", "");
    (!text.trim().is_empty()).then_some(text)
}

/// The chat `route` delivers to on `platform`.
fn target(
    manager: &SessionManager,
    route: &Route,
    platform: &str,
    payload: &Value,
) -> Result<Target, String> {
    let thread_id =
        extra(route, payload, "message_thread_id").or_else(|| extra(route, payload, "thread_id"));
    if let Some(chat_id) = extra(route, payload, "chat_id") {
        return Ok(Target {
            platform: platform.to_owned(),
            chat_id,
            thread_id,
        });
    }
    let sender = manager.services().cron_delivery();
    sender
        .and_then(|s| s.home(platform))
        .ok_or_else(|| {
            format!(
                "route '{}' delivers to {platform} but names no chat: set deliver_extra.chat_id or {}_HOME_CHANNEL",
                route.name,
                platform.to_ascii_uppercase()
            )
        })
}

/// Sends `text` to `route`'s platform target.
pub async fn deliver(
    manager: &SessionManager,
    route: &Route,
    payload: &Value,
    text: &str,
) -> Result<String, String> {
    let Ok(Deliver::Platform(platform)) = Deliver::parse(&route.deliver) else {
        return Err(format!("route '{}' has no chat to deliver to", route.name));
    };
    let target = target(manager, route, &platform, payload)?;
    let sender = manager.services().cron_delivery().ok_or_else(|| {
        format!("no messaging platform runs in this gateway to deliver to {platform}")
    })?;
    if !sender.platforms().iter().any(|p| p == &platform) {
        return Err(format!(
            "{platform} is not connected in this gateway (connected: {})",
            sender.platforms().join(", ")
        ));
    }
    sender.send(&target, text).await?;
    Ok(format!("{platform}:{}", target.chat_id))
}

/// The `{"status": …}` reply body for an answer delivered in the HTTP reply.
pub fn http_reply(job: &Job, answer: &Answer) -> (u16, Value) {
    let mut body = Map::new();
    body.insert("route".into(), json!(job.route.name));
    body.insert("event".into(), json!(job.event));
    body.insert("delivery_id".into(), json!(job.delivery_id));
    body.insert("session_id".into(), json!(answer.session_id));
    match &answer.text {
        Ok(text) => {
            body.insert("status".into(), json!("ok"));
            body.insert("response".into(), json!(text));
            (200, Value::Object(body))
        }
        Err(e) => {
            body.insert("status".into(), json!("error"));
            body.insert("error".into(), json!(e));
            (502, Value::Object(body))
        }
    }
}
