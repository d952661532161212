//! AWS Signature Version 4 (`AWS4-HMAC-SHA256`) for header-signed requests.
//!
//! The signing time is a parameter so a test can reproduce a published
//! signature. Neither the secret nor derived keys appear in `Debug` output.

use std::fmt::{self, Write as _};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::credentials::timefmt::format_iso_utc;

/// The signing algorithm name.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// Long-term or temporary AWS credentials. `Debug` shows only the key id.
#[derive(Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    /// `AWS_ACCESS_KEY_ID`.
    pub access_key_id: String,
    /// `AWS_SECRET_ACCESS_KEY`.
    pub secret_access_key: String,
    /// `AWS_SESSION_TOKEN`, for temporary credentials.
    pub session_token: Option<String>,
}

impl fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// The parts of a request that are signed.
#[derive(Debug, Clone, Copy)]
pub struct SigningRequest<'a> {
    /// `GET`, `POST` …
    pub method: &'a str,
    /// The `Host` header as sent (with `:port` when not the scheme's default).
    pub host: &'a str,
    /// The path as sent on the wire, already percent-encoded.
    pub path: &'a str,
    /// The query string as sent, without `?` (empty for none).
    pub query: &'a str,
    /// Headers to sign besides `host`, `x-amz-date` and `x-amz-security-token`.
    pub headers: &'a [(&'a str, &'a str)],
    /// The body (hashed into the signature).
    pub payload: &'a [u8],
}

/// The headers a signature adds to a request. `Debug` hides the signature.
#[derive(Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    /// `x-amz-date` value (`20150830T123600Z`).
    pub amz_date: String,
    /// `x-amz-security-token` value, when the credentials carry a session token.
    pub security_token: Option<String>,
    /// The full `Authorization` header value.
    pub authorization: String,
}

impl fmt::Debug for SignedHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignedHeaders")
            .field("amz_date", &self.amz_date)
            .field(
                "security_token",
                &self.security_token.as_ref().map(|_| "<redacted>"),
            )
            .field("authorization", &"<redacted>")
            .finish()
    }
}

/// `20150830T123600Z` for `t` (UTC).
pub fn amz_date(t: SystemTime) -> String {
    // `2015-08-30T12:36:00.000000+00:00` → `20150830T123600Z`.
    let iso = format_iso_utc(t);
    let mut out: String = iso
        .chars()
        .take(19)
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    out.push('Z');
    out
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// Hex SHA-256 of `data` (the `x-amz-content-sha256` value of a body).
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// HMAC-SHA256 (RFC 2104) of `data` under `key`.
pub fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    use hmac::{KeyInit as _, Mac as _};
    // HMAC takes a key of any length, so this cannot fail.
    let Ok(mut mac) = hmac::Hmac::<Sha256>::new_from_slice(key) else {
        return [0; 32];
    };
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// Percent-encodes every byte except RFC 3986 unreserved characters, and
/// `/` when `keep_slash` (upper-case hex, as SigV4 requires).
pub fn uri_encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The canonical request and the `SignedHeaders` list, for `req` at `amz_date`.
pub(crate) fn canonical_request(
    req: &SigningRequest<'_>,
    amz_date: &str,
    security_token: Option<&str>,
) -> (String, String) {
    let mut headers: Vec<(String, String)> = vec![
        ("host".to_owned(), req.host.to_owned()),
        ("x-amz-date".to_owned(), amz_date.to_owned()),
    ];
    if let Some(token) = security_token {
        headers.push(("x-amz-security-token".to_owned(), token.to_owned()));
    }
    headers.extend(
        req.headers
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), (*v).to_owned())),
    );
    headers.sort();
    let mut canonical_headers = String::new();
    for (name, value) in &headers {
        // Values are trimmed and inner runs of spaces collapsed.
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = writeln!(canonical_headers, "{name}:{value}");
    }
    let signed = headers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(";");
    // Non-S3 services sign the path encoded once more, as the SDKs do.
    let path = if req.path.is_empty() { "/" } else { req.path };
    let path = uri_encode(path, true);
    let mut query: Vec<&str> = req.query.split('&').filter(|p| !p.is_empty()).collect();
    query.sort_unstable();
    let query: Vec<String> = query
        .into_iter()
        .map(|p| {
            if p.contains('=') {
                p.to_owned()
            } else {
                format!("{p}=")
            }
        })
        .collect();
    let text = format!(
        "{}\n{path}\n{}\n{canonical_headers}\n{signed}\n{}",
        req.method.to_ascii_uppercase(),
        query.join("&"),
        sha256_hex(req.payload)
    );
    (text, signed)
}

/// The signing key for a day, region and service.
fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> [u8; 32] {
    let k_date = hmac_sha256(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac_sha256(&k_date, region.as_bytes());
    let k_service = hmac_sha256(&k_region, service.as_bytes());
    hmac_sha256(&k_service, b"aws4_request")
}

/// Signs `req` for `service` in `region` at time `at`.
pub fn sign(
    creds: &AwsCredentials,
    region: &str,
    service: &str,
    at: SystemTime,
    req: &SigningRequest<'_>,
) -> SignedHeaders {
    let amz_date = amz_date(at);
    let date = &amz_date[..8];
    let token = creds
        .session_token
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let (canonical, signed) = canonical_request(req, &amz_date, token);
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let string_to_sign = format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        sha256_hex(canonical.as_bytes())
    );
    let key = signing_key(&creds.secret_access_key, date, region, service);
    let signature = hex(&hmac_sha256(&key, string_to_sign.as_bytes()));
    SignedHeaders {
        authorization: format!(
            "{ALGORITHM} Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}",
            creds.access_key_id
        ),
        security_token: token.map(str::to_owned),
        amz_date,
    }
}

#[cfg(test)]
#[path = "sigv4_tests.rs"]
mod tests;
