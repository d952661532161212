//! Checking that a webhook request was signed with the route's secret, in
//! the schemes senders use: Svix (`svix-*`), GitHub (`X-Hub-Signature-256`),
//! GitLab (`X-Gitlab-Token`) and the generic `X-Webhook-Signature[-V2]`.
//! Every comparison takes the same time whatever matches.

use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// How far a signed timestamp may be from now.
pub const TOLERANCE_SECS: i64 = 300;

/// Why a request's signature is not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No signature header the route knows.
    Missing,
    /// A signature that does not match, or a timestamp too old or new.
    Invalid,
}

/// The request headers a check reads (lower-case names).
pub trait Headers {
    /// A header's value.
    fn get(&self, name: &str) -> Option<&str>;
}

impl Headers for axum::http::HeaderMap {
    fn get(&self, name: &str) -> Option<&str> {
        axum::http::HeaderMap::get(self, name).and_then(|v| v.to_str().ok())
    }
}

fn mac(key: &[u8]) -> Option<Hmac<Sha256>> {
    <Hmac<Sha256> as KeyInit>::new_from_slice(key).ok()
}

/// HMAC-SHA256 of `parts` under `key`.
pub fn sign(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    let Some(mut m) = mac(key) else {
        return Vec::new();
    };
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().to_vec()
}

/// Lower-case hex.
fn unhex(text: &str) -> Option<Vec<u8>> {
    hex::decode(text.trim()).ok()
}

/// Whether `claimed` is the MAC of `parts` (constant time).
fn matches(key: &[u8], parts: &[&[u8]], claimed: &[u8]) -> bool {
    let Some(mut m) = mac(key) else {
        return false;
    };
    for p in parts {
        m.update(p);
    }
    m.verify_slice(claimed).is_ok()
}

/// Equal in constant time (for length-equal secrets; lengths are not secret).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn fresh(timestamp: &str, now: i64) -> bool {
    timestamp
        .trim()
        .parse::<i64>()
        .is_ok_and(|t| (now - t).abs() <= TOLERANCE_SECS)
}

/// Checks `body` against `secret` with whichever scheme the headers use.
pub fn verify(headers: &dyn Headers, body: &[u8], secret: &str, now: i64) -> Result<(), Refusal> {
    let svix = ["svix-id", "svix-timestamp", "svix-signature"];
    if svix.iter().any(|h| headers.get(h).is_some()) {
        return svix_check(headers, body, secret, now);
    }
    if let Some(sig) = headers.get("x-hub-signature-256") {
        let claimed = sig.trim().strip_prefix("sha256=").and_then(unhex);
        return match claimed {
            Some(c) if matches(secret.as_bytes(), &[body], &c) => Ok(()),
            _ => Err(Refusal::Invalid),
        };
    }
    if let Some(token) = headers.get("x-gitlab-token") {
        return if same(token.as_bytes(), secret.as_bytes()) {
            Ok(())
        } else {
            Err(Refusal::Invalid)
        };
    }
    if let Some(sig) = headers.get("x-webhook-signature-v2") {
        let Some(ts) = headers.get("x-webhook-timestamp").filter(|t| fresh(t, now)) else {
            return Err(Refusal::Invalid);
        };
        return match unhex(sig) {
            Some(c) if matches(secret.as_bytes(), &[ts.trim().as_bytes(), b".", body], &c) => {
                Ok(())
            }
            _ => Err(Refusal::Invalid),
        };
    }
    if let Some(sig) = headers.get("x-webhook-signature") {
        return match unhex(sig) {
            Some(c) if matches(secret.as_bytes(), &[body], &c) => Ok(()),
            _ => Err(Refusal::Invalid),
        };
    }
    Err(Refusal::Missing)
}

fn svix_check(headers: &dyn Headers, body: &[u8], secret: &str, now: i64) -> Result<(), Refusal> {
    let (Some(id), Some(ts), Some(sigs)) = (
        headers.get("svix-id"),
        headers.get("svix-timestamp"),
        headers.get("svix-signature"),
    ) else {
        return Err(Refusal::Invalid);
    };
    if !fresh(ts, now) {
        return Err(Refusal::Invalid);
    }
    let b64 = base64::engine::general_purpose::STANDARD;
    let key = match secret.strip_prefix("whsec_") {
        Some(encoded) => b64.decode(encoded).map_err(|_| Refusal::Invalid)?,
        None => secret.as_bytes().to_vec(),
    };
    let parts: [&[u8]; 5] = [id.as_bytes(), b".", ts.trim().as_bytes(), b".", body];
    let ok = sigs
        .split_whitespace()
        .filter_map(|s| s.strip_prefix("v1,"))
        .filter_map(|s| b64.decode(s).ok())
        .any(|claimed| matches(&key, &parts, &claimed));
    if ok { Ok(()) } else { Err(Refusal::Invalid) }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct H(HashMap<&'static str, String>);
    impl Headers for H {
        fn get(&self, name: &str) -> Option<&str> {
            self.0.get(name).map(String::as_str)
        }
    }

    #[test]
    fn hmac_matches_the_rfc_4231_vector() {
        // RFC 4231 test case 2.
        let mac = sign(b"Jefe", &[b"what do ya want for nothing?"]);
        assert_eq!(
            hex::encode(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn each_scheme_accepts_its_signature_and_refuses_a_forgery() {
        let body = br#"{"a":1}"#;
        let now = 1_800_000_000;
        let gh = format!("sha256={}", hex::encode(sign(b"s3", &[body])));
        let h = H(HashMap::from([("x-hub-signature-256", gh)]));
        assert_eq!(verify(&h, body, "s3", now), Ok(()));
        assert_eq!(verify(&h, b"{\"a\":2}", "s3", now), Err(Refusal::Invalid));
        assert_eq!(verify(&h, body, "other", now), Err(Refusal::Invalid));

        let h = H(HashMap::from([("x-gitlab-token", "s3".to_owned())]));
        assert_eq!(verify(&h, body, "s3", now), Ok(()));
        assert_eq!(verify(&h, body, "s4", now), Err(Refusal::Invalid));

        let ts = now.to_string();
        let v2 = hex::encode(sign(b"s3", &[ts.as_bytes(), b".", body]));
        let h = H(HashMap::from([
            ("x-webhook-signature-v2", v2.clone()),
            ("x-webhook-timestamp", ts.clone()),
        ]));
        assert_eq!(verify(&h, body, "s3", now), Ok(()));
        assert_eq!(verify(&h, body, "s3", now + 301), Err(Refusal::Invalid));

        let key = b"svix-key";
        let secret = format!(
            "whsec_{}",
            base64::engine::general_purpose::STANDARD.encode(key)
        );
        let sig = base64::engine::general_purpose::STANDARD
            .encode(sign(key, &[b"msg_1", b".", ts.as_bytes(), b".", body]));
        let h = H(HashMap::from([
            ("svix-id", "msg_1".to_owned()),
            ("svix-timestamp", ts),
            ("svix-signature", format!("v1,bogus v1,{sig}")),
        ]));
        assert_eq!(verify(&h, body, &secret, now), Ok(()));

        assert_eq!(
            verify(&H(HashMap::new()), body, "s3", now),
            Err(Refusal::Missing)
        );
    }
}
