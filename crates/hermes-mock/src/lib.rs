//! A scripted mock of an OpenAI-compatible chat-completions server, for tests.
//!
//! [`MockServer::start`] binds `127.0.0.1:0` and serves from its own thread,
//! so it works from plain `#[test]`s, `#[tokio::test]`s and tests that run the
//! `hermes` binary as a subprocess. Each `POST …/chat/completions` consumes
//! the next queued [`Reply`]; every request is recorded for later inspection.
//! A `POST …/messages` consumes replies the same way but is answered in the
//! Anthropic Messages format (named SSE events, Anthropic error bodies), and a
//! `POST …/responses` in the OpenAI Responses format. A Bedrock
//! `POST …/model/{id}/converse-stream` is answered in the binary AWS
//! event-stream framing (`…/converse` with one JSON document).
//!
//! The HTTP/1.1 server is hand-rolled so tests control the bytes: delays
//! between SSE chunks, streams cut mid-way. Every response carries
//! `Connection: close`.

mod anthropic;
mod bedrock;
mod conversation;
mod http;
mod reply;
mod responses;
mod server;

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

pub use conversation::check_conversation;
pub use reply::Reply;
use reply::Wire;

/// One request as the mock received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// `GET`, `POST` …
    pub method: String,
    /// The request target, query included (`/v1/chat/completions`).
    pub path: String,
    /// Headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Null` when empty or not JSON.
    pub body: serde_json::Value,
    /// The body as text (lossy UTF-8).
    pub raw_body: String,
}

impl RecordedRequest {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether this is a model call: a chat-completions, an Anthropic
    /// Messages or an OpenAI Responses request.
    pub fn is_chat(&self) -> bool {
        self.method == "POST"
            && (path_only(&self.path).ends_with("/chat/completions")
                || self.is_messages()
                || self.is_responses()
                || self.is_bedrock())
    }

    /// Whether this is a Bedrock Converse call (`POST …/model/{id}/converse`
    /// or `…/converse-stream`).
    pub fn is_bedrock(&self) -> bool {
        let path = path_only(&self.path).trim_end_matches('/');
        self.method == "POST"
            && path.contains("/model/")
            && (path.ends_with("/converse-stream") || path.ends_with("/converse"))
    }

    /// The model id of a Bedrock call, percent-decoded from its path.
    pub fn bedrock_model(&self) -> Option<String> {
        let path = path_only(&self.path).trim_end_matches('/');
        let (_, rest) = path.split_once("/model/")?;
        let (id, _) = rest.rsplit_once('/')?;
        Some(percent_decode(id))
    }

    /// Whether this is an OpenAI Responses call (`POST …/responses`).
    pub fn is_responses(&self) -> bool {
        self.method == "POST"
            && path_only(&self.path)
                .trim_end_matches('/')
                .ends_with("/responses")
    }

    /// The wire format this request is answered in, by its route.
    pub(crate) fn wire(&self) -> Wire {
        if self.is_messages() {
            Wire::Anthropic
        } else if self.is_responses() {
            Wire::Responses
        } else if self.is_bedrock() {
            Wire::Bedrock
        } else {
            Wire::Chat
        }
    }

    /// Whether this is an Anthropic Messages call (`POST …/messages`).
    pub fn is_messages(&self) -> bool {
        self.method == "POST"
            && path_only(&self.path)
                .trim_end_matches('/')
                .ends_with("/messages")
    }
}

pub(crate) fn path_only(target: &str) -> &str {
    target.split('?').next().unwrap_or(target)
}

/// `%XX` escapes decoded (invalid ones kept as they are).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Computes the reply to a model call from the request itself (see
/// [`MockServer::respond_with`]); `None` leaves the request unanswered (500).
pub type Responder = Arc<dyn Fn(&RecordedRequest) -> Option<Reply> + Send + Sync>;

#[derive(Default)]
pub(crate) struct State {
    pub replies: VecDeque<Reply>,
    pub requests: Vec<RecordedRequest>,
    pub responder: Option<Responder>,
    /// Stop recording request bodies (load tests with many requests).
    pub forget_bodies: bool,
    /// When set, model listings without this bearer key get 401.
    pub required_key: Option<String>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("replies", &self.replies.len())
            .field("requests", &self.requests.len())
            .field("responder", &self.responder.is_some())
            .finish()
    }
}

pub(crate) type Shared = Arc<Mutex<State>>;

pub(crate) fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The running mock server; dropping it shuts the server down.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    state: Shared,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Starts a server on `127.0.0.1` at a free port, on its own thread.
    ///
    /// # Panics
    ///
    /// When no local port can be bound or no thread can be started; use
    /// [`MockServer::try_start`] to handle that.
    #[allow(clippy::panic)]
    pub fn start() -> MockServer {
        match Self::try_start() {
            Ok(server) => server,
            Err(e) => panic!("hermes-mock: cannot start the mock server: {e}"),
        }
    }

    /// Like [`MockServer::start`], reporting failures instead of panicking.
    pub fn try_start() -> io::Result<MockServer> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let state: Shared = Arc::default();
        let (tx, rx) = oneshot::channel();
        let thread_state = Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name(format!("hermes-mock-{}", addr.port()))
            .spawn(move || runtime.block_on(server::serve(listener, thread_state, rx)))?;
        Ok(MockServer {
            addr,
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    /// The base URL to configure a client with: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues a reply for the next unanswered chat-completions request.
    pub fn push(&self, reply: Reply) {
        lock(&self.state).replies.push_back(reply);
    }

    /// Queues several replies, in order.
    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) {
        lock(&self.state).replies.extend(replies);
    }

    /// Answers model calls that no queued reply is meant for with `responder`'s
    /// reply for the request (a script that follows each conversation's state,
    /// for tests with many concurrent conversations).
    pub fn respond_with(
        &self,
        responder: impl Fn(&RecordedRequest) -> Option<Reply> + Send + Sync + 'static,
    ) {
        lock(&self.state).responder = Some(Arc::new(responder));
    }

    /// Keeps recording requests but drops their bodies, so a load test's
    /// memory stays flat.
    pub fn forget_bodies(&self) {
        lock(&self.state).forget_bodies = true;
    }

    /// Answers `GET …/models` with 401 unless it carries `Authorization:
    /// Bearer KEY` (a provider check with a wrong key).
    pub fn require_key(&self, key: &str) {
        lock(&self.state).required_key = Some(key.to_owned());
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).requests.clone()
    }

    /// The JSON bodies of the model calls (chat-completions, Anthropic
    /// Messages and Responses requests), in arrival order.
    pub fn chat_requests(&self) -> Vec<serde_json::Value> {
        lock(&self.state)
            .requests
            .iter()
            .filter(|r| r.is_chat())
            .map(|r| r.body.clone())
            .collect()
    }

    /// The JSON bodies of the Anthropic Messages requests only, in arrival order.
    pub fn messages_requests(&self) -> Vec<serde_json::Value> {
        lock(&self.state)
            .requests
            .iter()
            .filter(|r| r.is_messages())
            .map(|r| r.body.clone())
            .collect()
    }

    /// The JSON bodies of the OpenAI Responses requests only, in arrival order.
    pub fn responses_requests(&self) -> Vec<serde_json::Value> {
        lock(&self.state)
            .requests
            .iter()
            .filter(|r| r.is_responses())
            .map(|r| r.body.clone())
            .collect()
    }

    /// How many queued replies have not been consumed yet.
    pub fn remaining(&self) -> usize {
        lock(&self.state).replies.len()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
