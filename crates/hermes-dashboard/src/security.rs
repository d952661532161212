//! Who may use the dashboard and how: on loopback by default; off loopback
//! only with a login token (a cookie after the login page); every change
//! carries the page's CSRF token; a strict Content-Security-Policy; and on
//! loopback the `Host` must name this machine, so a web page that rebinds
//! its own name to 127.0.0.1 cannot drive it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Form;
use axum::extract::{Path, Request, State as Extract};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::json;

use crate::{DashboardConfig, State};

/// The `.env` variable holding the login token.
pub const TOKEN_VAR: &str = "HERMES_DASHBOARD_TOKEN";

/// The cookie a login sets.
const COOKIE: &str = "hermes_dashboard";

/// Scripts, styles and connections from this origin only; no framing.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const INDEX: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");

/// Whether `host` is a loopback address or `localhost`.
pub fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A fresh random token (256 bits, hex).
pub fn new_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// The process's secrets and logged-in browsers.
pub(crate) struct Guard {
    /// Sent in the page; every change must carry it back.
    csrf: String,
    /// The login token, when one is required.
    token: Option<String>,
    /// Cookies handed out by logins (kept in memory: a restart logs out).
    logins: Mutex<HashSet<String>>,
    /// Bound to loopback: the `Host` must name this machine.
    loopback: bool,
}

impl Guard {
    pub(crate) fn new(config: &DashboardConfig) -> Self {
        Self {
            csrf: new_token(),
            token: config.token.clone().filter(|t| !t.is_empty()),
            logins: Mutex::new(HashSet::new()),
            loopback: is_loopback(&config.host),
        }
    }

    fn logged_in(&self, headers: &HeaderMap) -> bool {
        if self.token.is_none() {
            return true;
        }
        let logins = self.logins.lock().unwrap_or_else(PoisonError::into_inner);
        cookies(headers).any(|(name, value)| name == COOKIE && logins.contains(value))
    }
}

fn cookies(headers: &HeaderMap) -> impl Iterator<Item = (&str, &str)> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
}

/// Equal without saying where they differ (no timing hint to a guesser).
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The host part of a `Host` header or an origin's authority.
fn host_of(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    authority.split(':').next().unwrap_or(authority)
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({"error": message}))).into_response()
}

/// Applies the rules to every request, then the headers to every response.
pub(crate) async fn guard(
    Extract(state): Extract<Arc<State>>,
    request: Request,
    next: Next,
) -> Response {
    let guard = &state.guard;
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if guard.loopback && !is_loopback(host_of(host)) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "this dashboard answers on localhost only",
        );
    }
    let path = request.uri().path().to_owned();
    let open = path == "/login" || path == "/assets/app.css";
    if !open && !guard.logged_in(headers) {
        return if path.starts_with("/api/") {
            refuse(StatusCode::UNAUTHORIZED, "log in first (/login)")
        } else {
            Redirect::to("/login").into_response()
        };
    }
    let changes = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if changes {
        // A form or script on another site can send cookies, but neither its
        // origin nor the page's token.
        let origin_ok = headers
            .get(header::ORIGIN)
            .and_then(|o| o.to_str().ok())
            .is_none_or(|origin| {
                let authority = origin.split("://").nth(1).unwrap_or("");
                authority == host
            });
        let token_ok = path == "/login"
            || headers
                .get("x-csrf-token")
                .and_then(|t| t.to_str().ok())
                .is_some_and(|t| same(t, &guard.csrf));
        if !origin_ok || !token_ok {
            return refuse(
                StatusCode::FORBIDDEN,
                "refused: the request did not come from the dashboard page (missing or wrong \
                 CSRF token, or another origin); reload the page",
            );
        }
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if path.starts_with("/api/") {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

fn html(body: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// `GET /`: the page, with this process's CSRF token in it.
pub(crate) async fn page(Extract(state): Extract<Arc<State>>) -> Response {
    html(
        INDEX
            .replace("{{CSRF}}", &state.guard.csrf)
            .replace("{{VERSION}}", &state.config.version),
    )
}

/// `GET /assets/NAME`: the script and the style sheet.
pub(crate) async fn asset(Path(name): Path<String>) -> Response {
    let (kind, body) = match name.as_str() {
        "app.js" => ("text/javascript; charset=utf-8", APP_JS),
        "app.css" => ("text/css; charset=utf-8", APP_CSS),
        _ => return refuse(StatusCode::NOT_FOUND, "no such asset"),
    };
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

/// `GET /login`: the form (or straight to the page when no token is needed).
pub(crate) async fn login_page(Extract(state): Extract<Arc<State>>) -> Response {
    if state.guard.token.is_none() {
        return Redirect::to("/").into_response();
    }
    html(login_form(""))
}

fn login_form(problem: &str) -> String {
    let problem = if problem.is_empty() {
        String::new()
    } else {
        format!("<p class=\"flash error\">{problem}</p>")
    };
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Hermes — log in</title><link rel=\"stylesheet\" href=\"/assets/app.css\"></head>\
         <body class=\"login\"><main><h1>Hermes</h1>{problem}\
         <form method=\"post\" action=\"/login\"><label for=\"token\">Dashboard token \
         ({TOKEN_VAR} in .env)</label><input id=\"token\" name=\"token\" type=\"password\" \
         autocomplete=\"current-password\" autofocus><button type=\"submit\">Log in</button>\
         </form></main></body></html>"
    )
}

/// The login form's fields.
#[derive(Deserialize)]
pub(crate) struct Login {
    token: String,
}

/// `POST /login`: a right token sets the cookie and opens the page.
pub(crate) async fn login(
    Extract(state): Extract<Arc<State>>,
    Form(form): Form<Login>,
) -> Response {
    let guard = &state.guard;
    let Some(token) = &guard.token else {
        return Redirect::to("/").into_response();
    };
    if !same(form.token.trim(), token) {
        // A guesser waits a moment per try.
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let mut response = html(login_form("That token is not right."));
        *response.status_mut() = StatusCode::UNAUTHORIZED;
        return response;
    }
    let session = new_token();
    guard
        .logins
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(session.clone());
    let cookie = format!("{COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/");
    let mut response = Redirect::to("/").into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_hosts() {
        for host in ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "0.0.0.0",
            "192.168.1.4",
            "example.com",
            "localhost.evil.com",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
        assert_eq!(host_of("127.0.0.1:9119"), "127.0.0.1");
        assert_eq!(host_of("[::1]:9119"), "::1");
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }
}
