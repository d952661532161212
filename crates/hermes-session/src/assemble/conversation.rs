//! Step "conversation": the session's row in the store — a resumed one
//! (reopened, its stored prompt kept), a client-held conversation seen before
//! (its row continued), or a new one — and the prompt and history it starts
//! with.

use std::sync::Arc;

use crate::error::SessionError;
use crate::services::Services;
use crate::spec::{Notice, SessionSpec};
use crate::store::{self, SessionStore};

use super::Route;

/// The conversation a session continues or starts.
pub(super) struct Opened {
    pub(super) session_id: String,
    pub(super) system_prompt: String,
    pub(super) history: Vec<hermes_protocol::Message>,
}

/// Opens the conversation; `new_prompt` builds a system prompt when the
/// conversation has none stored.
pub(super) fn open(
    services: &Services,
    spec: &SessionSpec,
    store: Option<&Arc<dyn SessionStore>>,
    route: &Route,
    new_prompt: &dyn Fn(&mut Vec<Notice>) -> String,
    notices: &mut Vec<Notice>,
) -> Result<Opened, SessionError> {
    let failed = |e: store::StoreError| SessionError::Store(e.0);
    match (&spec.resume, store) {
        (Some(request), Some(db)) => {
            let found = store::find(db.as_ref(), request, &spec.source).map_err(failed)?;
            db.reopen_session(&found.id).map_err(failed)?;
            let system_prompt = found.system_prompt.unwrap_or_else(|| new_prompt(notices));
            Ok(Opened {
                session_id: found.id,
                system_prompt,
                history: found.history,
            })
        }
        (Some(_), None) => Err(SessionError::Store(format!(
            "cannot resume: {}",
            services
                .store_problem()
                .unwrap_or_else(|| "no session store".into())
        ))),
        (None, Some(db)) if seen_before(spec, db.as_ref()) => {
            // A client-held conversation seen before: continue its row.
            let seed = spec
                .seed
                .as_ref()
                .map(|s| s.session_id.clone())
                .unwrap_or_default();
            let row = db.session(&seed).map_err(failed)?;
            if row.as_ref().is_some_and(|r| r.ended_at.is_some()) {
                db.reopen_session(&seed).map_err(failed)?;
            }
            let system_prompt = row
                .and_then(|r| r.system_prompt)
                .unwrap_or_else(|| new_prompt(notices));
            Ok(Opened {
                session_id: seed,
                system_prompt,
                history: Vec::new(),
            })
        }
        (None, store) => start(services, spec, store, route, new_prompt, notices),
    }
}

fn seen_before(spec: &SessionSpec, db: &dyn SessionStore) -> bool {
    spec.seed
        .as_ref()
        .is_some_and(|seed| matches!(db.session(&seed.session_id), Ok(Some(_))))
}

/// A new conversation: its row written (with the routing a gateway gave it),
/// or, without a store, a warning — unless replicas require one.
fn start(
    services: &Services,
    spec: &SessionSpec,
    store: Option<&Arc<dyn SessionStore>>,
    route: &Route,
    new_prompt: &dyn Fn(&mut Vec<Notice>) -> String,
    notices: &mut Vec<Notice>,
) -> Result<Opened, SessionError> {
    let id = spec
        .seed
        .as_ref()
        .map(|s| s.session_id.clone())
        .unwrap_or_else(crate::session_id::new_session_id);
    let system_prompt = new_prompt(notices);
    match store {
        Some(db) => {
            let max_turns = spec
                .max_turns
                .unwrap_or(services.setup().config.agent.max_turns);
            db.create_session(&store::new_session_row(
                &id,
                &spec.source,
                &route.model(),
                &system_prompt,
                &spec.cwd.display().to_string(),
                max_turns,
            ))
            .and_then(|()| match &spec.routing {
                Some(routing) => db.set_routing(&id, routing),
                None => Ok(()),
            })
            .map_err(|e| SessionError::Store(e.0))?;
        }
        None => {
            if let Some(e) = services.required_store_error() {
                return Err(SessionError::Store(e));
            }
            notices.extend(services.store_problem().map(Notice::Warning));
        }
    }
    Ok(Opened {
        session_id: id,
        system_prompt,
        history: Vec::new(),
    })
}
