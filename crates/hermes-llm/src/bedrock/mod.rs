//! The AWS Bedrock Converse transport (`POST {endpoint}/model/{id}/converse-stream`),
//! answered in the binary `application/vnd.amazon.eventstream` framing and
//! authenticated with SigV4 (or a Bedrock API key as a bearer token).

mod events;
pub mod eventstream;
mod request;
pub mod sigv4;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use request::{DEFAULT_MAX_TOKENS, supports_tools};
pub use sigv4::AwsCredentials;

use crate::error::retry_after;
use crate::open::{Http, Opened, SharedHttp, open, ready};
use crate::{ChatRequest, DeltaStream, LlmError, Provider};
use events::ConverseEvents;
use eventstream::EventStreamDecoder;

/// The SigV4 service name of the Bedrock runtime.
pub const SERVICE: &str = "bedrock";
/// The region used when nothing names one (as the reference does).
pub const DEFAULT_REGION: &str = "us-east-1";

/// The runtime endpoint of `region`.
pub fn endpoint_for_region(region: &str) -> String {
    format!("https://bedrock-runtime.{}.amazonaws.com", region.trim())
}

/// The region named by a `bedrock-runtime[-fips].{region}.amazonaws.com` URL.
pub fn region_from_endpoint(url: &str) -> Option<String> {
    let host = crate::api_mode::host_of(url);
    let rest = host
        .strip_prefix("bedrock-runtime-fips.")
        .or_else(|| host.strip_prefix("bedrock-runtime."))?;
    let region = rest
        .strip_suffix(".amazonaws.com")
        .or_else(|| rest.strip_suffix(".amazonaws.com.cn"))?;
    (!region.is_empty() && !region.contains('.')).then(|| region.to_owned())
}

/// The region to use: an explicit setting (config `bedrock.region`), then
/// `AWS_REGION`, then `AWS_DEFAULT_REGION`, then [`DEFAULT_REGION`].
/// `var` looks a variable up in the caller's environment.
pub fn resolve_region(explicit: Option<&str>, var: impl Fn(&str) -> Option<String>) -> String {
    explicit
        .map(str::to_owned)
        .into_iter()
        .chain(
            ["AWS_REGION", "AWS_DEFAULT_REGION"]
                .into_iter()
                .filter_map(&var),
        )
        .map(|r| r.trim().to_owned())
        .find(|r| !r.is_empty())
        .unwrap_or_else(|| DEFAULT_REGION.to_owned())
}

/// How requests are authenticated. `Debug` hides the secrets.
#[derive(Clone, PartialEq, Eq)]
pub enum BedrockAuth {
    /// SigV4 with these credentials.
    SigV4(AwsCredentials),
    /// A Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`) sent as `Authorization: Bearer`.
    Bearer(String),
}

impl fmt::Debug for BedrockAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BedrockAuth::SigV4(creds) => f.debug_tuple("SigV4").field(creds).finish(),
            BedrockAuth::Bearer(_) => f.write_str("Bearer(<redacted>)"),
        }
    }
}

impl BedrockAuth {
    /// Credentials from the caller's environment, in the reference's order:
    /// `AWS_BEARER_TOKEN_BEDROCK`, then `AWS_ACCESS_KEY_ID` +
    /// `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`). `None` when neither is set.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let get = |name: &str| {
            var(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        if let Some(token) = get("AWS_BEARER_TOKEN_BEDROCK") {
            return Some(BedrockAuth::Bearer(token));
        }
        let (id, secret) = (get("AWS_ACCESS_KEY_ID")?, get("AWS_SECRET_ACCESS_KEY")?);
        Some(BedrockAuth::SigV4(AwsCredentials {
            access_key_id: id,
            secret_access_key: secret,
            session_token: get("AWS_SESSION_TOKEN"),
        }))
    }
}

/// Where the signer gets the time; injectable so signatures are reproducible.
pub type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// Where and how to reach Bedrock. `Debug` hides the credentials.
#[derive(Clone)]
pub struct BedrockConfig {
    /// Runtime endpoint root, e.g. `https://bedrock-runtime.us-east-1.amazonaws.com`.
    pub endpoint: String,
    /// Region in the SigV4 credential scope.
    pub region: String,
    /// Credentials.
    pub auth: BedrockAuth,
    /// Longest wait for the response headers and between stream messages.
    pub idle_timeout: Duration,
    /// Longest wait for the TCP/TLS connection.
    pub connect_timeout: Duration,
    /// Longest time one request may take, body included (`HERMES_API_TIMEOUT`).
    pub request_timeout: Duration,
    /// The signing time source.
    pub clock: Clock,
    /// A client to share with other providers; `None` builds one for this provider.
    pub http: Option<SharedHttp>,
}

impl BedrockConfig {
    /// Defaults for `endpoint` in `region` with `auth`.
    pub fn new(endpoint: impl Into<String>, region: impl Into<String>, auth: BedrockAuth) -> Self {
        Self {
            endpoint: endpoint.into(),
            region: region.into(),
            auth,
            idle_timeout: crate::DEFAULT_READ_TIMEOUT,
            connect_timeout: Duration::from_secs(30),
            request_timeout: crate::DEFAULT_REQUEST_TIMEOUT,
            clock: Arc::new(SystemTime::now),
            http: None,
        }
    }
}

impl fmt::Debug for BedrockConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BedrockConfig")
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("auth", &self.auth)
            .field("idle_timeout", &self.idle_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .finish_non_exhaustive()
    }
}

/// A [`Provider`] speaking Bedrock ConverseStream. `Debug` hides the credentials.
#[derive(Clone)]
pub struct BedrockProvider {
    name: String,
    endpoint: String,
    region: String,
    auth: BedrockAuth,
    idle_timeout: Duration,
    clock: Clock,
    http: Http,
}

impl fmt::Debug for BedrockProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BedrockProvider")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

/// The model id as one URL path segment (ARNs and `:0` suffixes included).
fn model_segment(model: &str) -> String {
    sigv4::uri_encode(model.trim(), false)
}

fn sensitive(value: &str) -> Result<HeaderValue, LlmError> {
    let mut v = HeaderValue::from_str(value).map_err(|_| {
        LlmError::Config("credentials contain characters not allowed in a header".into())
    })?;
    v.set_sensitive(true);
    Ok(v)
}

fn plain(value: &str) -> Result<HeaderValue, LlmError> {
    HeaderValue::from_str(value)
        .map_err(|_| LlmError::Config(format!("invalid header value {value:?}")))
}

/// The request id AWS sends (`x-amzn-requestid`), else the generic ones.
fn aws_request_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get("x-amzn-requestid")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .or_else(|| crate::error::request_id(headers))
}

/// An HTTP error response: the `x-amzn-ErrorType` header (`ValidationException:http://…`)
/// names the exception, the body holds `{"message": …}`.
fn http_error(status: u16, headers: &HeaderMap, body: &str) -> LlmError {
    let kind = headers
        .get("x-amzn-errortype")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(':').next())
        .map(str::trim)
        .filter(|v| !v.is_empty());
    events::aws_error(
        status,
        kind,
        body,
        aws_request_id(headers).as_deref(),
        retry_after(headers),
    )
}

impl BedrockProvider {
    /// Validates `cfg` and builds the HTTP client.
    pub fn new(name: impl Into<String>, cfg: BedrockConfig) -> Result<Self, LlmError> {
        let endpoint = cfg.endpoint.trim().trim_end_matches('/').to_owned();
        let url = reqwest::Url::parse(&endpoint)
            .map_err(|e| LlmError::Config(format!("invalid Bedrock endpoint: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(LlmError::Config(format!(
                "Bedrock endpoint must be an http(s) URL with a host, not {endpoint}"
            )));
        }
        let region = cfg.region.trim().to_owned();
        if region.is_empty() {
            return Err(LlmError::Config("Bedrock needs an AWS region".into()));
        }
        let http = Http::new(cfg.http.as_ref(), HeaderMap::new(), cfg.connect_timeout)?
            .with_request_timeout(cfg.request_timeout);
        Ok(Self {
            name: name.into(),
            endpoint,
            region,
            auth: cfg.auth,
            idle_timeout: cfg.idle_timeout,
            clock: cfg.clock,
            http,
        })
    }

    /// The URL a streamed request for `model` goes to.
    pub fn stream_url(&self, model: &str) -> String {
        format!(
            "{}/model/{}/converse-stream",
            self.endpoint,
            model_segment(model)
        )
    }

    /// The URL a non-streamed request for `model` goes to.
    pub fn converse_url(&self, model: &str) -> String {
        format!("{}/model/{}/converse", self.endpoint, model_segment(model))
    }

    /// The JSON body this provider sends for `request`.
    pub fn request_body(&self, request: &ChatRequest) -> Value {
        request::request_body(request)
    }

    /// Headers authenticating a POST of `body` to `url`.
    fn auth_headers(&self, url: &str, body: &[u8]) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        match &self.auth {
            BedrockAuth::Bearer(token) => {
                headers.insert(AUTHORIZATION, sensitive(&format!("Bearer {token}"))?);
            }
            BedrockAuth::SigV4(creds) => {
                let url = reqwest::Url::parse(url)
                    .map_err(|e| LlmError::Config(format!("invalid Bedrock URL: {e}")))?;
                let host = match (url.host_str(), url.port()) {
                    (Some(h), Some(p)) => format!("{h}:{p}"),
                    (Some(h), None) => h.to_owned(),
                    (None, _) => return Err(LlmError::Config("Bedrock URL has no host".into())),
                };
                let content_sha = sigv4::sha256_hex(body);
                let signed = sigv4::sign(
                    creds,
                    &self.region,
                    SERVICE,
                    (self.clock)(),
                    &sigv4::SigningRequest {
                        method: "POST",
                        host: &host,
                        path: url.path(),
                        query: url.query().unwrap_or(""),
                        headers: &[
                            ("content-type", "application/json"),
                            ("x-amz-content-sha256", &content_sha),
                        ],
                        payload: body,
                    },
                );
                headers.insert("x-amz-date", plain(&signed.amz_date)?);
                headers.insert("x-amz-content-sha256", plain(&content_sha)?);
                if let Some(token) = &signed.security_token {
                    headers.insert("x-amz-security-token", sensitive(token)?);
                }
                headers.insert(AUTHORIZATION, sensitive(&signed.authorization)?);
            }
        }
        Ok(headers)
    }

    /// Opens a signed POST of `body` to `url`; an HTTP error is mapped from
    /// its AWS exception.
    async fn post(
        &self,
        url: &str,
        accept: &'static str,
        body: Vec<u8>,
        cancel: &CancellationToken,
    ) -> Result<Opened, LlmError> {
        let headers = self.auth_headers(url, &body)?;
        let builder = self
            .http
            .post(url)
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, accept)
            .body(body);
        open(builder, cancel, self.idle_timeout, http_error).await
    }

    /// A non-streamed Converse call, as deltas.
    async fn converse(
        &self,
        model: &str,
        body: Vec<u8>,
        cancel: &CancellationToken,
    ) -> Result<DeltaStream, LlmError> {
        let value = self
            .post(&self.converse_url(model), "application/json", body, cancel)
            .await?
            .json("Converse")
            .await?;
        Ok(ready(events::response_deltas(&value)?))
    }

    async fn start(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<DeltaStream, LlmError> {
        if cancel.is_cancelled() {
            return Err(LlmError::Cancelled);
        }
        if request.model.trim().is_empty() {
            return Err(LlmError::Config("Bedrock needs a model id".into()));
        }
        let body = serde_json::to_vec(&self.request_body(request))
            .map_err(|e| LlmError::Decode(format!("cannot encode the request: {e}")))?;
        let url = self.stream_url(&request.model);
        let opened = match self
            .post(
                &url,
                "application/vnd.amazon.eventstream",
                body.clone(),
                cancel,
            )
            .await
        {
            // IAM policies that allow InvokeModel but not the streaming action
            // deny ConverseStream for good: answer through Converse instead.
            Err(LlmError::Http {
                status: 403,
                body: text,
                ..
            }) if text
                .to_ascii_lowercase()
                .contains("invokemodelwithresponsestream") =>
            {
                return self.converse(&request.model, body, cancel).await;
            }
            other => other?,
        };
        let req_id = aws_request_id(&opened.headers);
        Ok(opened.pump(EventStreamDecoder::new(), ConverseEvents::default(), req_id))
    }
}

impl Provider for BedrockProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(self.start(request, cancel))
    }
}
