//! Opening a response, shared by every transport: building the HTTP client,
//! sending a request under cancellation and an idle timeout, turning a
//! non-success status into its error, and then reading the body as one JSON
//! document or handing it to a [`Pump`].

use std::future::Future;
use std::sync::Once;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{describe, request_id, truncate};
use crate::pump::{Framing, Pump, WireEvents};
use crate::sse::SseDecoder;
use crate::{DeltaStream, LlmError, StreamDelta};

/// Largest error body read from a failed response.
/// The longest one model request may take when nothing says otherwise (the
/// reference's `HERMES_API_TIMEOUT` default).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(1800);

/// The longest wait for response headers or the next chunk when nothing says
/// otherwise (the reference's `HERMES_STREAM_READ_TIMEOUT` default).
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(120);

const MAX_ERROR_READ: usize = 64 * 1024;
/// Largest non-streamed (plain JSON) reply read.
const MAX_JSON_READ: usize = 32 * 1024 * 1024;

/// A response body still to read.
pub(crate) type Body = BoxStream<'static, reqwest::Result<Bytes>>;

/// Turns a non-success response (status, headers, body text) into its error.
pub(crate) type ErrorOf = fn(u16, &HeaderMap, &str) -> LlmError;

/// Installs the process-wide rustls crypto provider (ring) once.
pub(crate) fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means another provider is installed already, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Parses a (trimmed) base URL, which must be http or https.
pub(crate) fn parse_base(base: &str) -> Result<reqwest::Url, LlmError> {
    let url = reqwest::Url::parse(base)
        .map_err(|e| LlmError::Config(format!("invalid base URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(LlmError::Config(format!(
            "base URL must be http or https, not {}",
            url.scheme()
        )));
    }
    Ok(url)
}

/// An HTTP client with its connection pool, which any number of providers can
/// share (one per process in a server with many sessions). Cheap to clone.
#[derive(Clone)]
pub struct SharedHttp {
    client: reqwest::Client,
}

impl std::fmt::Debug for SharedHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedHttp")
    }
}

impl SharedHttp {
    /// A client with our user agent and `connect_timeout` for each TCP/TLS connection.
    pub fn new(connect_timeout: Duration) -> Result<Self, LlmError> {
        install_crypto_provider();
        let tls = crate::tls::client_config()
            .map_err(|e| LlmError::Config(format!("cannot set up TLS: {e}")))?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .user_agent(concat!("hermes-rs/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(connect_timeout)
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build HTTP client: {}", describe(&e))))?;
        Ok(Self { client })
    }

    /// TLS settings for other connections of the process (WebSockets): the
    /// system's roots, HTTP/1.1 only.
    pub fn websocket_tls() -> Result<rustls::ClientConfig, LlmError> {
        install_crypto_provider();
        let mut config = crate::tls::client_config()
            .map_err(|e| LlmError::Config(format!("cannot set up TLS: {e}")))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }

    /// The client itself, for other HTTP work of the process (messaging platforms).
    pub fn client(&self) -> reqwest::Client {
        self.client.clone()
    }
}

/// A transport's HTTP access: a (possibly shared) client plus the headers this
/// provider sends on every request.
#[derive(Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    headers: HeaderMap,
    request_timeout: Option<Duration>,
}

impl Http {
    /// `shared`'s client, or a new one connecting within `connect_timeout`.
    pub(crate) fn new(
        shared: Option<&SharedHttp>,
        headers: HeaderMap,
        connect_timeout: Duration,
    ) -> Result<Self, LlmError> {
        let client = match shared {
            Some(shared) => shared.client.clone(),
            None => SharedHttp::new(connect_timeout)?.client,
        };
        Ok(Self {
            client,
            headers,
            request_timeout: None,
        })
    }

    /// Bounds every request, from connecting until its body is read.
    pub(crate) fn with_request_timeout(mut self, limit: Duration) -> Self {
        self.request_timeout = Some(limit);
        self
    }

    fn bounded(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self.request_timeout {
            Some(limit) => builder.timeout(limit),
            None => builder,
        }
    }

    /// A `GET` carrying this provider's headers.
    pub(crate) fn get(&self, url: impl reqwest::IntoUrl) -> reqwest::RequestBuilder {
        self.bounded(self.client.get(url).headers(self.headers.clone()))
    }

    /// A `POST` carrying this provider's headers.
    pub(crate) fn post(&self, url: impl reqwest::IntoUrl) -> reqwest::RequestBuilder {
        self.bounded(self.client.post(url).headers(self.headers.clone()))
    }
}

/// Runs `fut` unless `cancel` fires first or `idle` passes.
pub(crate) async fn guarded<T>(
    cancel: &CancellationToken,
    idle: Duration,
    what: &str,
    fut: impl Future<Output = T>,
) -> Result<T, LlmError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(LlmError::Cancelled),
        r = tokio::time::timeout(idle, fut) => {
            r.map_err(|_| LlmError::Timeout(format!("{what} from the provider for {idle:?}")))
        }
    }
}

/// Reads a whole body, up to `max` bytes (the rest is dropped).
async fn read_all(
    body: &mut Body,
    cancel: &CancellationToken,
    idle: Duration,
    max: usize,
) -> Result<Vec<u8>, LlmError> {
    let mut out = Vec::new();
    while let Some(chunk) = guarded(cancel, idle, "no data", body.next()).await? {
        let chunk = chunk.map_err(|e| {
            LlmError::Transport(format!(
                "reading the response failed: {}",
                describe(&e.without_url())
            ))
        })?;
        let room = max.saturating_sub(out.len());
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if out.len() >= max {
            break;
        }
    }
    Ok(out)
}

/// Deltas that are all known already (a non-streamed reply) as a stream.
pub(crate) fn ready(deltas: Vec<StreamDelta>) -> DeltaStream {
    stream::iter(deltas.into_iter().map(Ok)).boxed()
}

/// A response with a success status, its body not read yet.
pub(crate) struct Opened {
    /// The response headers.
    pub(crate) headers: HeaderMap,
    body: Body,
    cancel: CancellationToken,
    idle: Duration,
}

/// Sends `builder` unless `cancel` fires first or no response comes within
/// `idle`. A non-success status ends in `error_of` of the status, headers and
/// body (its first 64 KiB; a body that cannot be read counts as empty, unless
/// reading it was cancelled).
pub(crate) async fn open(
    builder: reqwest::RequestBuilder,
    cancel: &CancellationToken,
    idle: Duration,
    error_of: ErrorOf,
) -> Result<Opened, LlmError> {
    if cancel.is_cancelled() {
        return Err(LlmError::Cancelled);
    }
    let response = guarded(cancel, idle, "no response", builder.send())
        .await?
        .map_err(LlmError::from_reqwest)?;
    let status = response.status();
    let headers = response.headers().clone();
    let mut body = response.bytes_stream().boxed();
    if !status.is_success() {
        // A body that cannot be read still leaves the status to report.
        let bytes = match read_all(&mut body, cancel, idle, MAX_ERROR_READ).await {
            Err(LlmError::Cancelled) => return Err(LlmError::Cancelled),
            Err(_) => Vec::new(),
            Ok(bytes) => bytes,
        };
        let text = String::from_utf8_lossy(&bytes);
        return Err(error_of(status.as_u16(), &headers, &text));
    }
    Ok(Opened {
        headers,
        body,
        cancel: cancel.clone(),
        idle,
    })
}

/// Opens a streamed `POST` of the JSON `body` to `url` (asking for SSE, with
/// `bearer` as the bearer token when set), as [`open`] does with the generic
/// HTTP error.
pub(crate) async fn post_sse(
    http: &Http,
    url: &str,
    bearer: Option<&str>,
    body: &(impl serde::Serialize + Sync),
    cancel: &CancellationToken,
    idle: Duration,
) -> Result<Opened, LlmError> {
    let mut builder = http
        .post(url)
        .header(ACCEPT, "text/event-stream")
        .json(body);
    if let Some(key) = bearer {
        builder = builder.bearer_auth(key);
    }
    open(builder, cancel, idle, LlmError::from_response_parts).await
}

impl Opened {
    /// Whether the content type says plain JSON rather than an event stream.
    fn is_json(&self) -> bool {
        let content_type = self
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        content_type.contains("json") && !content_type.contains("event-stream")
    }

    /// Reads the whole body (up to 32 MiB) as one JSON document; `what` names
    /// it in a decode error (`bad {what} JSON`).
    pub(crate) async fn json(mut self, what: &str) -> Result<Value, LlmError> {
        let bytes = read_all(&mut self.body, &self.cancel, self.idle, MAX_JSON_READ).await?;
        serde_json::from_slice(&bytes).map_err(|e| {
            let text = String::from_utf8_lossy(&bytes);
            LlmError::Decode(format!("bad {what} JSON ({e}): {}", truncate(&text, 200)))
        })
    }

    /// The body as deltas: split into frames by `framing`, each handed to `wire`.
    pub(crate) fn pump<D: Framing, W: WireEvents<D::Frame>>(
        self,
        framing: D,
        wire: W,
        request_id: Option<String>,
    ) -> DeltaStream {
        Pump::framed(self.body, framing, wire, request_id, self.cancel, self.idle)
    }

    /// The deltas of an SSE transport: a plain JSON reply (named `what`) turned
    /// into deltas by `from_json`, else the SSE events handed to `wire`.
    pub(crate) async fn sse<W: WireEvents>(
        self,
        what: &str,
        from_json: impl FnOnce(&Value, Option<&str>) -> Result<Vec<StreamDelta>, LlmError>,
        wire: W,
    ) -> Result<DeltaStream, LlmError> {
        let req_id = request_id(&self.headers);
        if self.is_json() {
            let value = self.json(what).await?;
            return Ok(ready(from_json(&value, req_id.as_deref())?));
        }
        Ok(self.pump(SseDecoder::new(), wire, req_id))
    }
}
