//! A provider that draws its API key from a [`CredentialPool`] and moves to the
//! next key when told the current one is exhausted.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::CredentialPool;
use crate::{ChatRequest, DeltaStream, LlmError, Provider};

/// Builds the real transport for one API key.
pub type BuildWithKey = Box<dyn Fn(&str) -> Result<Arc<dyn Provider>, LlmError> + Send + Sync>;

/// Wraps a transport so its key comes from the pool.
pub struct PooledProvider {
    name: String,
    pool: Mutex<CredentialPool>,
    current: Mutex<(String, Arc<dyn Provider>)>,
    build: BuildWithKey,
}

impl std::fmt::Debug for PooledProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PooledProvider")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn pool_err(e: impl std::fmt::Display) -> LlmError {
    LlmError::Config(format!("credential pool: {e}"))
}

impl PooledProvider {
    /// Selects the first usable key; `None` when the pool has none (use plain config then).
    pub fn new(
        name: impl Into<String>,
        mut pool: CredentialPool,
        build: BuildWithKey,
    ) -> Result<Option<Self>, LlmError> {
        let Some(cred) = pool.select().map_err(pool_err)? else {
            return Ok(None);
        };
        let inner = build(cred.api_key())?;
        Ok(Some(Self {
            name: name.into(),
            pool: Mutex::new(pool),
            current: Mutex::new((cred.id.clone(), inner)),
            build,
        }))
    }

    fn inner(&self) -> Result<(String, Arc<dyn Provider>), LlmError> {
        let guard = self.current.lock().map_err(|_| pool_err("lock poisoned"))?;
        Ok((guard.0.clone(), Arc::clone(&guard.1)))
    }
}

impl Provider for PooledProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(async move {
            let (id, inner) = self.inner()?;
            if let Ok(mut pool) = self.pool.lock() {
                // Usage counts feed least_used; a failed write must not fail the call.
                let _ = pool.record_use(&id);
            }
            inner.stream(request, cancel).await
        })
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        Box::pin(async move {
            let (_, inner) = self.inner()?;
            inner.list_models().await
        })
    }

    fn rotate_credential(&self, status: Option<u16>, retry_after: Option<Duration>) -> bool {
        let Ok((id, _)) = self.inner() else {
            return false;
        };
        let Ok(mut pool) = self.pool.lock() else {
            return false;
        };
        let reset_at = retry_after.map(|d| SystemTime::now() + d);
        let next = match pool.rotate(&id, status.unwrap_or(0), reset_at) {
            Ok(Some(next)) if next.id != id => next,
            _ => return false,
        };
        match (self.build)(next.api_key()) {
            Ok(provider) => match self.current.lock() {
                Ok(mut current) => {
                    *current = (next.id.clone(), provider);
                    true
                }
                Err(_) => false,
            },
            Err(_) => false,
        }
    }
}
