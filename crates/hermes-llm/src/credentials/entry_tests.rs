use super::*;
use serde_json::json;
use std::time::UNIX_EPOCH;

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

#[test]
fn debug_and_display_never_show_the_key() {
    let key = "sk-or-v1-0123456789abcdefSECRETwxyz";
    let cred = Credential::from_json("openrouter", &json!({"id": "abc123", "access_token": key}))
        .unwrap_or_else(|| Credential::from_map("x", &Map::new()));
    let debug = format!("{cred:?}");
    let display = format!("{cred}");
    for shown in [&debug, &display] {
        assert!(!shown.contains(key), "{shown}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("sk-o...wxyz"), "{shown}");
    }
    assert_eq!(cred.api_key(), key);
    let pretty = format!("{cred:#?}");
    assert!(!pretty.contains("SECRET"));
}

#[test]
fn mask_secret_matches_reference_rules() {
    assert_eq!(mask_secret(""), "");
    assert_eq!(mask_secret("short"), "***");
    assert_eq!(mask_secret("elevenchars"), "***");
    assert_eq!(mask_secret("sk-proj-abcdef1234567890"), "sk-p...7890");
}

#[test]
fn defaults_for_missing_fields() {
    let cred = Credential::from_map("openrouter", &Map::new());
    assert_eq!(cred.label, "manual");
    assert_eq!(cred.auth_type, AUTH_TYPE_API_KEY);
    assert_eq!(cred.priority, 0);
    assert_eq!(cred.source, SOURCE_MANUAL);
    assert_eq!(cred.request_count, 0);
    assert!(!cred.is_available_at(at(1)), "no key, not selectable");
}

#[test]
fn exhausted_until_uses_ttl_by_status() {
    let mut obj = Map::new();
    obj.insert("access_token".into(), json!("k"));
    patch_exhausted(
        &mut obj,
        Status::Exhausted,
        at(1_000_000),
        401,
        &FailureDetail::default(),
    );
    let cred = Credential::from_map("p", &obj);
    assert_eq!(cred.exhausted_until(), Some(at(1_000_000 + 300)));
    patch_exhausted(
        &mut obj,
        Status::Exhausted,
        at(1_000_000),
        429,
        &FailureDetail::default(),
    );
    let cred = Credential::from_map("p", &obj);
    assert_eq!(cred.exhausted_until(), Some(at(1_003_600)));
    patch_exhausted(
        &mut obj,
        Status::Exhausted,
        at(1_000_000),
        402,
        &FailureDetail::default(),
    );
    let cred = Credential::from_map("p", &obj);
    assert_eq!(cred.exhausted_until(), Some(at(1_003_600)));
    patch_exhausted(
        &mut obj,
        Status::Exhausted,
        at(1_000_000),
        429,
        &FailureDetail {
            reset_at: Some(at(1_000_060)),
            ..FailureDetail::default()
        },
    );
    let cred = Credential::from_map("p", &obj);
    assert_eq!(cred.exhausted_until(), Some(at(1_000_060)));
}

#[test]
fn reads_reference_timestamp_encodings() {
    let cred = Credential::from_map(
        "p",
        json!({
            "access_token": "k",
            "last_status": "exhausted",
            "last_status_at": "2023-11-14T22:13:20+00:00",
            "last_error_code": 429,
            "last_error_reset_at": 1_700_000_100_000u64,
        })
        .as_object()
        .unwrap_or(&Map::new()),
    );
    assert_eq!(cred.last_status_at, Some(at(1_700_000_000)));
    assert_eq!(cred.last_error_reset_at, Some(at(1_700_000_100)));
    assert!(!cred.is_available_at(at(1_700_000_099)));
    assert!(cred.is_available_at(at(1_700_000_100)));
}

#[test]
fn dead_is_never_available() {
    let cred = Credential::from_map(
        "p",
        json!({"access_token": "k", "last_status": "dead", "last_status_at": 1.0})
            .as_object()
            .unwrap_or(&Map::new()),
    );
    assert_eq!(cred.last_status, Some(Status::Dead));
    assert!(!cred.is_available_at(at(u32::MAX.into())));
}

#[test]
fn new_entry_has_reference_fields() {
    let v = new_entry_json("openrouter", "a1b2c3", "api-key-1", 0, "sk-x");
    for key in [
        "id",
        "label",
        "auth_type",
        "priority",
        "source",
        "access_token",
        "last_status",
        "last_status_at",
        "last_error_code",
        "last_error_reason",
        "last_error_message",
        "last_error_reset_at",
        "request_count",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["source"], "manual");
    let oat = new_entry_json("anthropic", "x", "l", 0, "sk-ant-oat01-zzz");
    assert_eq!(oat["auth_type"], "oauth");
}

#[test]
fn request_count_patch_increments_stored_value() {
    let mut obj = Map::new();
    patch_request_count(&mut obj);
    patch_request_count(&mut obj);
    assert_eq!(obj["request_count"], 2);
}

#[test]
fn terminal_401_reasons_mean_dead() {
    let revoked = FailureDetail {
        reason: Some(" Token_Revoked "),
        ..FailureDetail::default()
    };
    assert_eq!(revoked.status_for(401), Status::Dead);
    assert_eq!(revoked.status_for(429), Status::Exhausted);
    let plain = FailureDetail {
        reason: Some("token_expired"),
        ..FailureDetail::default()
    };
    assert_eq!(plain.status_for(401), Status::Exhausted);
}
