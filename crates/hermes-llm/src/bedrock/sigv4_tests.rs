use std::time::{Duration, UNIX_EPOCH};

use super::*;

/// The credentials of the AWS SigV4 test suite.
fn suite_credentials() -> AwsCredentials {
    AwsCredentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
        session_token: None,
    }
}

/// 2015-08-30T12:36:00Z, the time of every test-suite case.
fn suite_time() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_440_938_160)
}

fn vanilla(method: &str) -> SigningRequest<'_> {
    SigningRequest {
        method,
        host: "example.amazonaws.com",
        path: "/",
        query: "",
        headers: &[],
        payload: b"",
    }
}

#[test]
fn get_vanilla_matches_the_aws_test_suite() {
    let signed = sign(
        &suite_credentials(),
        "us-east-1",
        "service",
        suite_time(),
        &vanilla("GET"),
    );
    assert_eq!(signed.amz_date, "20150830T123600Z");
    assert_eq!(
        signed.authorization,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
         SignedHeaders=host;x-amz-date, \
         Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    );
    assert_eq!(signed.security_token, None);
}

#[test]
fn post_vanilla_matches_the_aws_test_suite() {
    let req = vanilla("POST");
    let (canonical, signed_headers) = canonical_request(&req, "20150830T123600Z", None);
    assert_eq!(
        canonical,
        "POST\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\
         e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(signed_headers, "host;x-amz-date");
    // The suite's string-to-sign ends with this hash of the canonical request.
    assert_eq!(
        sha256_hex(canonical.as_bytes()),
        "553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87"
    );
    let signed = sign(
        &suite_credentials(),
        "us-east-1",
        "service",
        suite_time(),
        &req,
    );
    assert!(
        signed.authorization.ends_with(
            "Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
        ),
        "{}",
        signed.authorization
    );
}

#[test]
fn hmac_matches_rfc_4231() {
    // Test case 2.
    assert_eq!(
        hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
    // Test case 6: a key longer than the block is hashed first.
    assert_eq!(
        hex(&hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First"
        )),
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    );
}

#[test]
fn session_token_is_sent_and_signed() {
    let creds = AwsCredentials {
        session_token: Some("tok/en".into()),
        ..suite_credentials()
    };
    let signed = sign(
        &creds,
        "us-east-1",
        "service",
        suite_time(),
        &vanilla("GET"),
    );
    assert_eq!(signed.security_token.as_deref(), Some("tok/en"));
    assert!(
        signed
            .authorization
            .contains("SignedHeaders=host;x-amz-date;x-amz-security-token,")
    );
}

#[test]
fn extra_headers_are_sorted_and_the_path_is_encoded_again() {
    let req = SigningRequest {
        method: "post",
        host: "bedrock-runtime.eu-west-1.amazonaws.com",
        path: "/model/anthropic.claude-v2%3A1/converse-stream",
        query: "b=2&a=1",
        headers: &[
            ("X-Amz-Content-Sha256", "abc"),
            ("Content-Type", " application/json "),
        ],
        payload: b"{}",
    };
    let (canonical, signed) = canonical_request(&req, "20240101T000000Z", None);
    assert_eq!(signed, "content-type;host;x-amz-content-sha256;x-amz-date");
    let lines: Vec<&str> = canonical.lines().collect();
    assert_eq!(lines[0], "POST");
    assert_eq!(lines[1], "/model/anthropic.claude-v2%253A1/converse-stream");
    assert_eq!(lines[2], "a=1&b=2");
    assert_eq!(lines[3], "content-type:application/json");
}

#[test]
fn dates_encoding_and_debug() {
    assert_eq!(amz_date(suite_time()), "20150830T123600Z");
    assert_eq!(uri_encode("a b/c~d:*", false), "a%20b%2Fc~d%3A%2A");
    assert_eq!(uri_encode("/x y/", true), "/x%20y/");
    let creds = AwsCredentials {
        session_token: Some("SESSIONTOKEN".into()),
        ..suite_credentials()
    };
    let shown = format!("{creds:?}");
    assert!(shown.contains("AKIDEXAMPLE"));
    assert!(!shown.contains("EXAMPLEKEY") && !shown.contains("SESSIONTOKEN"));
    let signed = sign(
        &creds,
        "us-east-1",
        "service",
        suite_time(),
        &vanilla("GET"),
    );
    let shown = format!("{signed:?}");
    assert!(!shown.contains("Signature") && !shown.contains("SESSIONTOKEN"));
}
