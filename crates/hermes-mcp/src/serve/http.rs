//! `hermes mcp serve --http`: the same tools over Streamable HTTP at `/mcp`
//! (rmcp's service: session ids, SSE streams, the `Host` check against DNS
//! rebinding), with browser `Origin`s limited to this machine's and a bearer
//! token checked before rmcp sees a request.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::HermesServer;

/// How the HTTP server is reached.
#[derive(Debug, Clone)]
pub struct HttpServe {
    /// Whether the listener is on a loopback address.
    pub loopback: bool,
    /// The bearer token every request must carry (required off loopback).
    pub token: Option<String>,
}

impl HermesServer {
    /// Serves on `listener` until the process ends.
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        options: HttpServe,
    ) -> Result<(), String> {
        if !options.loopback && options.token.is_none() {
            return Err("serving MCP off loopback needs a bearer token: set \
                 HERMES_MCP_SERVE_TOKEN (in the environment or HERMES_HOME/.env)"
                .into());
        }
        let poller = tokio::spawn(self.bridge.clone().run());
        let mut config = StreamableHttpServerConfig::default();
        if options.loopback {
            config = config.with_allowed_origins([
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
            ]);
        } else {
            // Any name may reach a public listener; the token guards it.
            config = config.disable_allowed_hosts().enforce_origin_validation();
        }
        let server = self.clone();
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let token = options.token.map(Arc::<str>::from);
        let app =
            axum::Router::new()
                .nest_service("/mcp", service)
                .layer(axum::middleware::from_fn(
                    move |request: Request, next: Next| {
                        let token = token.clone();
                        async move { check_bearer(token.as_deref(), request, next).await }
                    },
                ));
        let served = axum::serve(listener, app).await;
        poller.abort();
        served.map_err(|e| format!("the MCP HTTP server stopped: {e}"))
    }
}

/// Lets a request through when no token is set or it carries the token.
async fn check_bearer(token: Option<&str>, request: Request, next: Next) -> Response {
    let Some(token) = token else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if same(given.trim().as_bytes(), token.as_bytes()) {
        return next.run(request).await;
    }
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        "missing or wrong bearer token",
    )
        .into_response()
}

/// Compares without an early exit, so timing says nothing of the token.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::same;

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
        assert!(!same(b"", b"x"));
    }
}
