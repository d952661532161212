//! `hermes dashboard`: one web page to watch, chat with and run Hermes —
//! chat, sessions, usage, cron, gateway, config, skills, MCP servers and logs
//! — served by the binary with its assets compiled in. Built on the session
//! runtime and the store, so it works alike on state.db and PostgreSQL and can
//! sit beside a running gateway on the same home.
//!
//! The page is plain HTML, CSS and JavaScript (no framework, no build step):
//! a few kilobytes that load at once and need no toolchain to maintain.

mod api;
mod chat;
mod cron;
mod extras;
mod gateway;
mod security;
mod sessions;
mod settings;
mod usage;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{delete, get, post};
use hermes_session::SessionManager;
use tokio_util::sync::CancellationToken;

pub use security::{TOKEN_VAR, is_loopback, new_token};

/// The largest request body taken (a chat message, a config value).
const MAX_BODY: usize = 1024 * 1024;

/// How long a browser may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(20);

/// Where and how the dashboard listens.
#[derive(Debug, Clone)]
pub struct DashboardConfig {
    /// The address to bind (`127.0.0.1` by default).
    pub host: String,
    /// The port (`9119`, the reference's).
    pub port: u16,
    /// The login token (`HERMES_DASHBOARD_TOKEN`); required off loopback.
    pub token: Option<String>,
    /// The version shown in the page.
    pub version: String,
}

/// What every handler shares.
pub struct State {
    manager: SessionManager,
    config: DashboardConfig,
    guard: security::Guard,
    chats: chat::Chats,
}

/// A bound dashboard, ready to serve.
pub struct Dashboard {
    listener: tokio::net::TcpListener,
    state: Arc<State>,
}

impl std::fmt::Debug for Dashboard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dashboard")
            .field("addr", &self.local_addr())
            .finish_non_exhaustive()
    }
}

impl Dashboard {
    /// Binds `config.host:config.port`; a bind off loopback without a token
    /// is refused (anyone who reaches the port could run commands).
    pub async fn bind(config: DashboardConfig, manager: SessionManager) -> Result<Self, String> {
        if !is_loopback(&config.host) && config.token.is_none() {
            return Err(format!(
                "refusing to serve the dashboard on {} without a login token: anyone who can \
                 reach that address could run commands as you. Create one with `hermes dashboard \
                 --new-token` (it is written to .env as {TOKEN_VAR}), or bind 127.0.0.1",
                config.host
            ));
        }
        let addr = format!("{}:{}", config.host, config.port);
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let guard = security::Guard::new(&config);
        Ok(Self {
            listener,
            state: Arc::new(State {
                manager,
                config,
                guard,
                chats: chat::Chats::default(),
            }),
        })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// Serves until `stop` fires; the chats' sessions are closed after.
    pub async fn run(self, stop: CancellationToken) {
        let state = self.state.clone();
        hermes_gateway::serve::serve(self.listener, router(self.state), stop, HEADER_TIMEOUT).await;
        state.chats.close_all();
    }
}

/// Every route, behind the login (when a token is set), the CSRF check on
/// changes, and the security headers.
pub fn router(state: Arc<State>) -> Router {
    let api = Router::new()
        .route("/api/overview", get(extras::overview))
        .route("/api/chat", post(chat::create))
        .route("/api/chat/{id}/events", get(chat::events))
        .route("/api/chat/{id}/{action}", post(chat::act))
        .route("/api/sessions", get(sessions::list))
        .route("/api/sessions/search", get(sessions::search))
        .route(
            "/api/sessions/{id}",
            get(sessions::show)
                .patch(sessions::rename)
                .delete(sessions::remove),
        )
        .route("/api/sessions/{id}/export", get(sessions::export))
        .route("/api/usage", get(usage::report))
        .route("/api/cron", get(cron::list).post(cron::add))
        .route("/api/cron/{id}", delete(cron::remove).patch(cron::edit))
        .route("/api/cron/{id}/runs", get(cron::runs))
        .route("/api/cron/{id}/runs/{run}", get(cron::output))
        .route("/api/cron/{id}/{action}", post(cron::act))
        .route("/api/gateway", get(gateway::status))
        .route("/api/gateway/pairing/{action}", post(gateway::pairing))
        .route("/api/config", get(settings::show).post(settings::set))
        .route("/api/config/{key}", delete(settings::unset))
        .route("/api/env", post(settings::set_env))
        .route("/api/env/{name}", delete(settings::unset_env))
        .route("/api/skills", get(extras::skills))
        .route("/api/skills/{name}", get(extras::skill))
        .route("/api/mcp", get(extras::mcp))
        .route("/api/logs/{file}", get(extras::logs));
    Router::new()
        .route("/", get(security::page))
        .route("/login", get(security::login_page).post(security::login))
        .route("/assets/{name}", get(security::asset))
        .merge(api)
        .fallback(api::not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            security::guard,
        ))
        .with_state(state)
}
