use super::*;
use crate::credentials::{CredentialPool, SplitMix64, Status, Strategy, SystemClock};
use serde_json::json;
use std::time::{Duration, UNIX_EPOCH};

const REFERENCE: &str = include_str!("../../tests/fixtures/reference_auth.json");

fn store(path: &Path) -> AuthStore {
    AuthStore::new(path, Arc::new(SystemClock), Box::new(SplitMix64::new(7)))
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

#[test]
fn lock_file_is_the_reference_sidecar() {
    let s = store(Path::new("/h/auth.json"));
    assert_eq!(s.lock_path(), PathBuf::from("/h/auth.lock"));
}

#[test]
fn add_list_remove_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let mut s = store(&path);
    let a = s.add("OpenRouter", "sk-or-aaaaaaaaaaaa1111", None).unwrap();
    let b = s
        .add("openrouter", "sk-or-bbbbbbbbbbbb2222", Some("work"))
        .unwrap();
    let c = s.add("openrouter", "sk-or-cccccccccccc3333", None).unwrap();
    assert_eq!(a.label, "api-key-1");
    assert_eq!(b.label, "work");
    assert_eq!(c.label, "api-key-3");
    assert_eq!((a.priority, b.priority, c.priority), (0, 1, 2));
    assert_eq!(a.id.len(), 6);
    assert!(a.id != b.id && b.id != c.id);
    assert!(matches!(
        s.add("openrouter", "  ", None),
        Err(PoolError::EmptyKey)
    ));

    let listed: Vec<String> = s
        .list("openrouter")
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(listed, [a.id.clone(), b.id.clone(), c.id.clone()]);

    // By label (case-insensitive), then by index, then by id.
    assert_eq!(s.remove("openrouter", "WORK").unwrap().id, b.id);
    assert_eq!(s.remove("openrouter", "2").unwrap().id, c.id);
    assert!(matches!(
        s.remove("openrouter", "5"),
        Err(PoolError::NotFound(_))
    ));
    assert_eq!(s.remove("openrouter", &a.id).unwrap().id, a.id);
    assert!(s.list("openrouter").unwrap().is_empty());

    let disk = read(&path);
    assert_eq!(disk["version"], 1);
    assert!(disk["providers"].is_object());
    assert!(disk["updated_at"].as_str().unwrap().ends_with("+00:00"));
}

#[test]
fn remove_renumbers_priorities_and_rejects_ambiguous_labels() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let mut s = store(&path);
    s.add("p", "key-one-xxxxxxxx", Some("same")).unwrap();
    s.add("p", "key-two-xxxxxxxx", Some("same")).unwrap();
    s.add("p", "key-three-xxxxxx", None).unwrap();
    assert!(matches!(
        s.remove("p", "same"),
        Err(PoolError::Ambiguous(_))
    ));
    s.remove("p", "1").unwrap();
    let left: Vec<i64> = s.list("p").unwrap().iter().map(|c| c.priority).collect();
    assert_eq!(left, [0, 1]);
}

#[test]
fn unknown_fields_survive_rewrites() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let original = json!({
        "version": 1,
        "active_provider": "nous",
        "providers": {"nous": {"access_token": "oauth-state", "future": [1, 2]}},
        "suppressed_sources": {"openrouter": ["env:OPENROUTER_API_KEY"]},
        "top_level_extra": {"nested": true},
        "credential_pool": {
            "anthropic": [{"id": "zzz999", "access_token": "other-provider-key", "weird": 5}],
            "openrouter": [
                {"id": "aaa111", "label": "a", "priority": 0, "access_token": "key-a-xxxxxxxxxx",
                 "secret_source": "vault", "tls": {"verify": false}, "custom_field": "keep me"},
                "not-an-object"
            ]
        }
    });
    fs::write(&path, serde_json::to_vec_pretty(&original).unwrap()).unwrap();

    let mut pool = CredentialPool::load(
        &path,
        "openrouter",
        Strategy::FillFirst,
        Arc::new(SystemClock),
    )
    .unwrap();
    pool.record_use("aaa111").unwrap();
    pool.mark_exhausted("aaa111", 429, None).unwrap();
    pool.add("key-b-xxxxxxxxxx", None).unwrap();

    let disk = read(&path);
    for key in [
        "active_provider",
        "providers",
        "suppressed_sources",
        "top_level_extra",
    ] {
        assert_eq!(disk[key], original[key], "{key}");
    }
    assert_eq!(
        disk["credential_pool"]["anthropic"],
        original["credential_pool"]["anthropic"]
    );
    let entry = &disk["credential_pool"]["openrouter"][0];
    assert_eq!(entry["custom_field"], "keep me");
    assert_eq!(entry["secret_source"], "vault");
    assert_eq!(entry["tls"], json!({"verify": false}));
    assert_eq!(entry["request_count"], 1);
    assert_eq!(entry["last_status"], "exhausted");
    assert_eq!(entry["last_error_code"], 429);
    assert_eq!(disk["credential_pool"]["openrouter"][1], "not-an-object");
    assert_eq!(
        disk["credential_pool"]["openrouter"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let stray: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

#[test]
fn reference_written_file_loads() {
    // Written by the reference's `CredentialPool.add_entry` (twice) and
    // `mark_exhausted_and_rotate(status_code=429, ...)`.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    fs::write(&path, REFERENCE).unwrap();
    let root: Value = serde_json::from_str(REFERENCE).unwrap();
    let status_at = root["credential_pool"]["openrouter"][0]["last_status_at"]
        .as_f64()
        .unwrap();
    let ten_min_later = UNIX_EPOCH + Duration::from_secs_f64(status_at + 600.0);
    let clock = move || ten_min_later;
    let mut pool =
        CredentialPool::load(&path, "openrouter", Strategy::FillFirst, Arc::new(clock)).unwrap();
    let entries = pool.entries();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].label, "api-key-1");
    assert_eq!(entries[0].last_status, Some(Status::Exhausted));
    assert_eq!(entries[0].last_error_code, Some(429));
    assert_eq!(entries[0].last_error_reason.as_deref(), Some("rate_limit"));
    assert_eq!(
        entries[0].base_url.as_deref(),
        Some("https://openrouter.ai/api/v1")
    );
    assert_eq!(entries[1].last_status, None);
    assert_eq!(entries[1].api_key(), "sk-or-v1-bbbbbbbbbbbb2222");
    let first = entries[0].clone();
    // The 429 cooldown (an hour) is still running: the second key is picked.
    let picked = pool.select().unwrap().unwrap();
    assert_eq!(picked.label, "api-key-2");
    assert!(first.exhausted_until().unwrap() > ten_min_later);
}

#[test]
fn corrupt_file_is_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    fs::write(&path, "{not json").unwrap();
    let mut s = store(&path);
    assert!(matches!(s.list("p"), Err(PoolError::Corrupt { .. })));
    assert!(matches!(
        s.add("p", "some-key-xxxxxx", None),
        Err(PoolError::Corrupt { .. })
    ));
    assert_eq!(fs::read_to_string(&path).unwrap(), "{not json");
    fs::write(&path, "[1, 2]").unwrap();
    assert!(matches!(s.list("p"), Err(PoolError::Shape { .. })));
}

#[test]
fn missing_file_is_an_empty_pool_and_is_not_created_by_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("home").join("auth.json");
    let mut pool =
        CredentialPool::load(&path, "p", Strategy::FillFirst, Arc::new(SystemClock)).unwrap();
    assert!(!pool.has_credentials());
    assert!(pool.select().unwrap().is_none());
    assert!(!pool.mark_exhausted("nope", 429, None).unwrap());
    assert!(!path.exists());
}

#[cfg(unix)]
#[test]
fn written_file_is_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    store(&path).add("p", "some-key-xxxxxx", None).unwrap();
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}
