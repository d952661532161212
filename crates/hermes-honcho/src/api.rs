//! Honcho's v3 REST API, the calls the provider makes (the routes and
//! bodies of the `honcho-ai` SDK the reference drives): get-or-create of the
//! workspace, peers and sessions, messages, context, the dialectic chat,
//! peer cards, search and conclusions.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::settings::{HonchoSettings, Observation};

/// Longest error body quoted in an error.
const MAX_ERROR_TEXT: usize = 300;

/// One workspace on one Honcho server.
#[derive(Clone)]
pub(crate) struct Api {
    http: reqwest::Client,
    base: reqwest::Url,
    workspace: String,
    key: Option<String>,
    timeout: Duration,
}

/// An observer's view of a target peer.
pub(crate) struct PeerView<'a> {
    /// Whose view.
    pub observer: &'a str,
    /// Of whom (`None`: the observer itself).
    pub target: Option<&'a str>,
}

impl Api {
    /// A client for `settings`' server and workspace.
    pub(crate) fn new(settings: &HonchoSettings, http: reqwest::Client) -> Result<Self, String> {
        let base = reqwest::Url::parse(&settings.base_url)
            .map_err(|e| format!("Honcho base URL {:?} is not a URL: {e}", settings.base_url))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(format!(
                "Honcho base URL {:?} must be an http(s) URL",
                settings.base_url
            ));
        }
        Ok(Self {
            http,
            base,
            workspace: settings.workspace.clone(),
            key: settings.api_key.clone(),
            timeout: settings.timeout,
        })
    }

    /// `/v3/workspaces/{ws}/…segments`, each segment escaped.
    fn url(&self, segments: &[&str], query: &[(&str, String)]) -> reqwest::Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty()
                .extend(["v3", "workspaces", self.workspace.as_str()])
                .extend(segments);
        }
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url
    }

    /// One request; the reply's JSON (null for an empty body).
    async fn send(
        &self,
        method: Method,
        url: reqwest::Url,
        body: Option<Value>,
    ) -> Result<Value, String> {
        let shown = format!("{method} {}", url.path());
        let mut request = self.http.request(method, url).timeout(self.timeout);
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.map_err(|e| {
            if e.is_timeout() {
                format!("{shown} timed out after {:?}", self.timeout)
            } else {
                format!("{shown} failed: cannot reach Honcho at {} ({e})", self.base)
            }
        })?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| format!("{shown}: reading the reply failed: {e}"))?;
        if !status.is_success() {
            let quoted: String = text.chars().take(MAX_ERROR_TEXT).collect();
            let advice = match status.as_u16() {
                401 | 403 => " (check HONCHO_API_KEY or apiKey in honcho.json)",
                _ => "",
            };
            return Err(format!("{shown}: HTTP {status}{advice}: {quoted}"));
        }
        if text.trim().is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text).map_err(|e| format!("{shown}: the reply is not JSON: {e}"))
    }

    /// POST to the workspace-relative path.
    async fn post(
        &self,
        segments: &[&str],
        query: &[(&str, String)],
        body: Value,
    ) -> Result<Value, String> {
        self.send(Method::POST, self.url(segments, query), Some(body))
            .await
    }

    /// GET from the workspace-relative path.
    async fn get(&self, segments: &[&str], query: &[(&str, String)]) -> Result<Value, String> {
        self.send(Method::GET, self.url(segments, query), None)
            .await
    }

    /// Creates the workspace unless it exists.
    pub(crate) async fn ensure_workspace(&self) -> Result<(), String> {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(["v3", "workspaces"]);
        }
        self.send(Method::POST, url, Some(json!({"id": self.workspace})))
            .await
            .map(drop)
    }

    /// Creates a peer unless it exists.
    pub(crate) async fn ensure_peer(&self, peer: &str) -> Result<(), String> {
        self.post(&["peers"], &[], json!({"id": peer}))
            .await
            .map(drop)
    }

    /// Creates a session unless it exists and adds both peers to it with
    /// their observation settings.
    pub(crate) async fn ensure_session(
        &self,
        session: &str,
        user: &str,
        ai: &str,
        observation: Observation,
    ) -> Result<(), String> {
        self.post(&["sessions"], &[], json!({"id": session}))
            .await?;
        let peers = json!({
            user: {"observe_me": observation.user_observe_me, "observe_others": observation.user_observe_others},
            ai: {"observe_me": observation.ai_observe_me, "observe_others": observation.ai_observe_others},
        });
        self.post(&["sessions", session, "peers"], &[], peers)
            .await
            .map(drop)
    }

    /// Appends messages (`(peer, content)`) to a session.
    pub(crate) async fn add_messages(
        &self,
        session: &str,
        messages: &[(&str, String)],
    ) -> Result<(), String> {
        let messages: Vec<Value> = messages
            .iter()
            .map(|(peer, content)| json!({"peer_id": peer, "content": content}))
            .collect();
        self.post(
            &["sessions", session, "messages"],
            &[],
            json!({"messages": messages}),
        )
        .await
        .map(drop)
    }

    /// The session's context: summary, messages, and a peer's
    /// representation and card when `view` is given.
    pub(crate) async fn session_context(
        &self,
        session: &str,
        view: Option<&PeerView<'_>>,
    ) -> Result<Value, String> {
        let mut query = vec![
            ("summary", "true".to_owned()),
            ("limit_to_session", "false".to_owned()),
        ];
        if let Some(view) = view {
            query.push((
                "peer_target",
                view.target.unwrap_or(view.observer).to_owned(),
            ));
            query.push(("peer_perspective", view.observer.to_owned()));
        }
        self.get(&["sessions", session, "context"], &query).await
    }

    /// A peer's representation and card (of `target` when given), focused
    /// on `search_query`.
    pub(crate) async fn peer_context(
        &self,
        view: &PeerView<'_>,
        search_query: Option<&str>,
    ) -> Result<Value, String> {
        let mut query = Vec::new();
        if let Some(target) = view.target {
            query.push(("target", target.to_owned()));
        }
        if let Some(q) = search_query.filter(|q| !q.trim().is_empty()) {
            query.push(("search_query", q.to_owned()));
        }
        self.get(&["peers", view.observer, "context"], &query).await
    }

    /// The dialectic agent's answer to `question` about a peer.
    pub(crate) async fn chat(
        &self,
        view: &PeerView<'_>,
        question: &str,
        level: &str,
    ) -> Result<String, String> {
        let mut body = json!({"query": question, "stream": false, "reasoning_level": level});
        if let Some(target) = view.target {
            body["target"] = json!(target);
        }
        let reply = self
            .post(&["peers", view.observer, "chat"], &[], body)
            .await?;
        Ok(reply["content"].as_str().unwrap_or_default().to_owned())
    }

    /// A peer card (the observer's card of `target` when given).
    pub(crate) async fn card(&self, view: &PeerView<'_>) -> Result<Vec<String>, String> {
        let query: Vec<(&str, String)> = view
            .target
            .map(|t| ("target", t.to_owned()))
            .into_iter()
            .collect();
        let reply = self.get(&["peers", view.observer, "card"], &query).await?;
        Ok(card_lines(&reply["peer_card"]))
    }

    /// Replaces a peer card; the card as stored.
    pub(crate) async fn set_card(
        &self,
        view: &PeerView<'_>,
        card: &[String],
    ) -> Result<Vec<String>, String> {
        let query: Vec<(&str, String)> = view
            .target
            .map(|t| ("target", t.to_owned()))
            .into_iter()
            .collect();
        let reply = self
            .send(
                Method::PUT,
                self.url(&["peers", view.observer, "card"], &query),
                Some(json!({"peer_card": card})),
            )
            .await?;
        let stored = card_lines(&reply["peer_card"]);
        Ok(if stored.is_empty() {
            card.to_vec()
        } else {
            stored
        })
    }

    /// Messages matching `query` from `peer`'s perspective (every session it
    /// took part in); falls back to the peer's own search on older servers.
    pub(crate) async fn search(
        &self,
        query: &str,
        peer: &str,
        limit: usize,
    ) -> Result<Vec<Value>, String> {
        let body = json!({"query": query, "filters": {"peer_perspective": peer}, "limit": limit});
        let reply = match self.post(&["search"], &[], body).await {
            Ok(reply) => reply,
            Err(_) => {
                let body = json!({"query": query, "filters": null, "limit": limit});
                self.post(&["peers", peer, "search"], &[], body).await?
            }
        };
        Ok(items(reply))
    }

    /// Records a conclusion `observer` drew about `observed`.
    pub(crate) async fn create_conclusion(
        &self,
        observer: &str,
        observed: &str,
        content: &str,
        session: &str,
    ) -> Result<(), String> {
        let conclusion = json!({
            "observer_id": observer,
            "observed_id": observed,
            "content": content,
            "session_id": session,
        });
        self.post(&["conclusions"], &[], json!({"conclusions": [conclusion]}))
            .await
            .map(drop)
    }

    /// The latest conclusions, or those matching `query`.
    pub(crate) async fn conclusions(
        &self,
        observer: &str,
        observed: &str,
        query: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Value>, String> {
        let filters = json!({"observer_id": observer, "observed_id": observed});
        let reply = match query {
            Some(q) => {
                let body = json!({"query": q, "top_k": limit, "filters": filters});
                self.post(&["conclusions", "query"], &[], body).await?
            }
            None => {
                let page = [("page", "1".to_owned()), ("size", limit.to_string())];
                self.post(&["conclusions", "list"], &page, json!({"filters": filters}))
                    .await?
            }
        };
        Ok(items(reply))
    }

    /// Deletes a conclusion.
    pub(crate) async fn delete_conclusion(&self, id: &str) -> Result<(), String> {
        self.send(Method::DELETE, self.url(&["conclusions", id], &[]), None)
            .await
            .map(drop)
    }
}

/// A list reply, bare or paged (`items`).
fn items(reply: Value) -> Vec<Value> {
    match reply {
        Value::Array(list) => list,
        Value::Object(mut page) => match page.remove("items") {
            Some(Value::Array(list)) => list,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// A card's lines (a list, or one string).
pub(crate) fn card_lines(card: &Value) -> Vec<String> {
    match card {
        Value::Array(lines) => lines
            .iter()
            .filter_map(|l| match l {
                Value::String(s) if !s.is_empty() => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            })
            .collect(),
        Value::String(s) if !s.is_empty() => vec![s.clone()],
        _ => Vec::new(),
    }
}
