use super::*;
use serde_json::json;

fn resolve_with(
    home: &Path,
    user_home: Option<&Path>,
    vars: &[(&str, &str)],
    yaml: Value,
) -> Result<Option<HonchoSettings>, String> {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let env = move |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    HonchoSettings::resolve(&Sources {
        hermes_home: home,
        user_home,
        env: &env,
        yaml: &yaml,
    })
}

#[test]
fn nothing_configured_is_off_and_a_key_alone_turns_it_on() {
    let home = tempfile::tempdir().unwrap();
    assert!(
        resolve_with(home.path(), None, &[], Value::Null)
            .unwrap()
            .is_none()
    );
    let s = resolve_with(
        home.path(),
        None,
        &[("HONCHO_API_KEY", "hk-1")],
        Value::Null,
    )
    .unwrap()
    .unwrap();
    assert_eq!(s.api_key.as_deref(), Some("hk-1"));
    assert_eq!(s.base_url, PRODUCTION_URL);
    assert_eq!(s.workspace, "hermes");
    assert_eq!(s.ai_peer, "hermes");
    assert_eq!(s.recall_mode, RecallMode::Hybrid);
    assert_eq!(s.session_strategy, SessionStrategy::PerDirectory);
    assert_eq!(s.timeout, Duration::from_secs(30));
    assert!(!format!("{s:?}").contains("hk-1"), "the key never prints");
}

#[test]
fn the_host_block_wins_over_the_root_and_enabled_false_turns_it_off() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("honcho.json"),
        json!({
            "apiKey": "root-key", "workspace": "root-ws", "peerName": "ann",
            "baseUrl": "https://honcho.example.com/v3/", "recallMode": "tools",
            "hosts": {"hermes": {"workspace": "host-ws", "aiPeer": "herm", "recallMode": "context",
                                 "sessionStrategy": "per-repo", "timeout": 4,
                                 "observation": {"ai": {"observeOthers": false}}}}
        })
        .to_string(),
    )
    .unwrap();
    let s = resolve_with(home.path(), None, &[], Value::Null)
        .unwrap()
        .unwrap();
    assert_eq!(s.workspace, "host-ws");
    assert_eq!(s.ai_peer, "herm");
    assert_eq!(s.peer_name.as_deref(), Some("ann"));
    assert_eq!(s.api_key.as_deref(), Some("root-key"));
    assert_eq!(s.base_url, "https://honcho.example.com");
    assert_eq!(s.recall_mode, RecallMode::Context);
    assert_eq!(s.session_strategy, SessionStrategy::PerRepo);
    assert_eq!(s.timeout, Duration::from_secs(4));
    assert!(!s.observation.ai_observe_others);
    assert!(s.observation.user_observe_me);

    std::fs::write(
        home.path().join("honcho.json"),
        json!({"apiKey": "k", "hosts": {"hermes": {"enabled": false}}}).to_string(),
    )
    .unwrap();
    assert!(
        resolve_with(home.path(), None, &[], Value::Null)
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_local_server_needs_no_key_and_the_user_files_are_read_in_order() {
    let home = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(user.path().join(".honcho")).unwrap();
    std::fs::write(
        user.path().join(".honcho/config.json"),
        json!({"baseUrl": "http://127.0.0.1:8000", "workspace": "global"}).to_string(),
    )
    .unwrap();
    let s = resolve_with(home.path(), Some(user.path()), &[], Value::Null)
        .unwrap()
        .unwrap();
    assert_eq!(s.workspace, "global");
    assert_eq!(s.api_key.as_deref(), Some("local"));
    // $HERMES_HOME/honcho.json comes first.
    std::fs::write(
        home.path().join("honcho.json"),
        json!({"baseUrl": "http://10.1.2.3:9000", "workspace": "mine"}).to_string(),
    )
    .unwrap();
    let s = resolve_with(home.path(), Some(user.path()), &[], Value::Null)
        .unwrap()
        .unwrap();
    assert_eq!(s.workspace, "mine");
    assert_eq!(s.base_url, "http://10.1.2.3:9000");
}

#[test]
fn config_yaml_supplies_the_url_and_timeout_last_and_bad_json_is_an_error() {
    let home = tempfile::tempdir().unwrap();
    let s = resolve_with(
        home.path(),
        None,
        &[("HONCHO_API_KEY", "k")],
        json!({"base_url": "https://self.example/", "request_timeout": "7.5"}),
    )
    .unwrap()
    .unwrap();
    assert_eq!(s.base_url, "https://self.example");
    assert_eq!(s.timeout, Duration::from_millis(7500));
    std::fs::write(home.path().join("honcho.json"), "{not json").unwrap();
    let err = resolve_with(home.path(), None, &[], Value::Null).unwrap_err();
    assert!(err.contains("honcho.json is not valid JSON"), "{err}");
}
