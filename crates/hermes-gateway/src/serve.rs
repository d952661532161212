//! Running the API server until a shutdown signal, then draining in-flight runs.
//!
//! Connections are served by hyper directly rather than `axum::serve`, which
//! gives hyper no timer, so a client trickling its headers held a connection
//! (and a task) open forever; here the headers must arrive within
//! [`HEADER_READ_TIMEOUT`].

use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hermes_session::SessionManager;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio_util::sync::CancellationToken;

use crate::api::{AppState, router};
use crate::config::ApiServerConfig;

/// How long shutdown waits for in-flight runs.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a client may take to send a request's headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(20);

/// A bound server, ready to run.
pub struct Server {
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    /// Other profiles served under `/p/<name>/` (`gateway.multiplex_profiles`).
    profiles: Vec<(String, Arc<AppState>)>,
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
            profiles: Vec::new(),
        })
    }

    /// Also serves each `(name, manager)` under `/p/<name>/…` with its own
    /// sessions, config and keys; the listener's key and limits apply to all.
    #[must_use]
    pub fn with_profiles(mut self, profiles: Vec<(String, SessionManager)>) -> Self {
        for (name, manager) in profiles {
            let mut state =
                AppState::new(self.state.config.clone(), manager, self.state.cwd.clone());
            state.log.clone_from(&self.state.log);
            self.profiles.push((name, Arc::new(state)));
        }
        self
    }

    /// Serves `observer`'s metrics at `/metrics`.
    #[must_use]
    pub fn with_observer(mut self, observer: Option<Arc<hermes_observe::Observer>>) -> Self {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.observer = observer;
        }
        self
    }

    /// Logs a line per request (health checks aside) through `log`.
    #[must_use]
    pub fn with_log(mut self, log: crate::log::LogFn) -> Self {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.log = Some(log);
        }
        self
    }

    /// Counts of the runs in flight (each profile's too).
    pub fn inflight(&self) -> Vec<Arc<crate::api::Inflight>> {
        std::iter::once(&self.state)
            .chain(self.profiles.iter().map(|(_, s)| s))
            .map(|s| s.inflight.clone())
            .collect()
    }

    /// Where it listens.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// Serves until `stop` fires, then stops accepting and waits (up to
    /// [`DRAIN_TIMEOUT`]) for runs in flight to finish.
    pub async fn run(self, stop: CancellationToken) -> Result<(), String> {
        let mut states = vec![self.state.clone()];
        let mut app = router(self.state);
        for (name, state) in self.profiles {
            states.push(state.clone());
            app = app.nest(&format!("/p/{name}"), router(state));
        }
        serve(self.listener, app, stop, HEADER_READ_TIMEOUT).await;
        let deadline = Instant::now() + DRAIN_TIMEOUT;
        while states.iter().any(|s| s.inflight.count() > 0) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }
}

/// Serves `app` on `listener` until `stop` fires, then lets open connections
/// finish their requests and returns once all are closed.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    stop: CancellationToken,
    header_timeout: Duration,
) {
    // Every connection task holds a receiver; `closed` resolves when all are gone.
    let (open_tx, open_rx) = tokio::sync::watch::channel(());
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors and the like: pause rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let service = TowerToHyperService::new(app.clone());
        let stop = stop.clone();
        let open = open_rx.clone();
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            let mut conn = pin!(
                builder
                    .serve_connection(TokioIo::new(stream), service)
                    .with_upgrades()
            );
            tokio::select! {
                _ = conn.as_mut() => {}
                () = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
            drop(open);
        });
    }
    drop(listener);
    drop(open_rx);
    open_tx.closed().await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_client_trickling_its_headers_is_cut_off() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route("/health", axum::routing::get(|| async { "ok" }));
        let stop = CancellationToken::new();
        let server = tokio::spawn(serve(
            listener,
            app,
            stop.clone(),
            Duration::from_millis(500),
        ));
        let (cut_after, answered) = tokio::task::spawn_blocking(move || {
            // A well-behaved request is answered.
            let mut quick = std::net::TcpStream::connect(addr).unwrap();
            quick
                .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .unwrap();
            let mut answer = String::new();
            quick.read_to_string(&mut answer).unwrap();
            // One header byte every 100 ms, never finishing.
            let started = Instant::now();
            let mut slow = std::net::TcpStream::connect(addr).unwrap();
            slow.write_all(b"GET /health HTTP/1.1\r\n").unwrap();
            while started.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(100));
                if slow.write_all(b"X").is_err() {
                    break;
                }
            }
            (started.elapsed(), answer)
        })
        .await
        .unwrap();
        assert!(answered.ends_with("ok"), "{answered}");
        assert!(
            cut_after < Duration::from_secs(3),
            "the slow client kept its connection for {cut_after:?}"
        );
        stop.cancel();
        tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .unwrap()
            .unwrap();
    }

    #[test]
    fn the_default_header_timeout_is_within_thirty_seconds() {
        assert!(HEADER_READ_TIMEOUT <= Duration::from_secs(30));
    }
}
