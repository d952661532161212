//! Running the API server until a shutdown signal, then draining in-flight runs.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hermes_session::SessionManager;
use tokio_util::sync::CancellationToken;

use crate::api::{AppState, router};
use crate::config::ApiServerConfig;

/// How long shutdown waits for in-flight runs.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// A bound server, ready to run.
pub struct Server {
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
}

impl Server {
    /// Binds `config.host:config.port`.
    pub async fn bind(
        config: ApiServerConfig,
        manager: SessionManager,
        cwd: std::path::PathBuf,
    ) -> Result<Self, String> {
        let addr = format!("{}:{}", config.host, config.port);
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        Ok(Self {
            listener,
            state: Arc::new(AppState::new(config, manager, cwd)),
        })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// Serves until `stop` fires, then stops accepting and waits (up to
    /// [`DRAIN_TIMEOUT`]) for runs in flight to finish.
    pub async fn run(self, stop: CancellationToken) -> Result<(), String> {
        let state = self.state.clone();
        let app = router(self.state);
        let graceful = stop.clone();
        axum::serve(self.listener, app)
            .with_graceful_shutdown(async move { graceful.cancelled().await })
            .await
            .map_err(|e| format!("server error: {e}"))?;
        let deadline = Instant::now() + DRAIN_TIMEOUT;
        while state.inflight.count() > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }
}
