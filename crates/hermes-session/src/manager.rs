//! Many sessions in one process: each started from a [`SessionSpec`] on the
//! shared [`Services`], each on its own task.

use crate::assemble::assemble;
use crate::conversation::{Conversation, SessionTask};
use crate::error::SessionError;
use crate::services::Services;
use crate::setup::Setup;
use crate::spec::SessionSpec;

/// Starts sessions; cheap to clone.
#[derive(Debug, Clone)]
pub struct SessionManager {
    services: Services,
}

impl SessionManager {
    /// A manager over `setup`, with `state.db` in its home as the store.
    pub fn new(setup: Setup) -> Self {
        Self::with_services(Services::new(setup))
    }

    /// A manager over existing services (another store, shared with something else).
    pub fn with_services(services: Services) -> Self {
        Self { services }
    }

    /// The shared services.
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// Assembles a session as `spec` asks and starts its task.
    pub async fn start(&self, spec: SessionSpec) -> Result<Conversation, SessionError> {
        let built = assemble(&self.services, &spec).await?;
        let notices = built.notices.clone();
        let task = SessionTask::new(self.services.clone(), spec, built);
        Ok(Conversation::spawn(task, notices))
    }
}
