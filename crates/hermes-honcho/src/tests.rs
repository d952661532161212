use std::path::Path;

use serde_json::{Value, json};

use crate::core::{Core, cut_at_word, sanitize};
use crate::provider::chunk;
use crate::settings::{HonchoSettings, Sources};

fn settings(extra: Value) -> HonchoSettings {
    let home = tempfile::tempdir().unwrap();
    let mut file = json!({"apiKey": "k", "baseUrl": "http://127.0.0.1:9"});
    if let (Some(file), Some(extra)) = (file.as_object_mut(), extra.as_object()) {
        file.extend(extra.clone());
    }
    std::fs::write(home.path().join("honcho.json"), file.to_string()).unwrap();
    HonchoSettings::resolve(&Sources {
        hermes_home: home.path(),
        user_home: None,
        env: &|_| None,
        yaml: &Value::Null,
    })
    .unwrap()
    .unwrap()
}

fn core(extra: Value, cwd: &Path, platform: &str) -> Core {
    let s = settings(extra);
    let http = hermes_llm::SharedHttp::new(std::time::Duration::from_secs(5)).unwrap();
    let api = crate::api::Api::new(&s, http.client()).unwrap();
    Core::new(
        s,
        api,
        tokio::runtime::Handle::current(),
        cwd.to_path_buf(),
        platform,
    )
}

#[tokio::test]
async fn session_names_follow_the_strategy_and_fit_honchos_limit() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("my project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let src = project.join("src");

    assert_eq!(
        core(json!({}), &src, "cli").session_name("20260101_x"),
        "src"
    );
    assert_eq!(
        core(json!({"sessionStrategy": "per-repo"}), &src, "cli").session_name("s"),
        "my-project"
    );
    assert_eq!(
        core(json!({"sessionStrategy": "per-session"}), &src, "cli").session_name("20260101_abc"),
        "20260101_abc"
    );
    assert_eq!(
        core(
            json!({"sessionStrategy": "global", "workspace": "ws"}),
            &src,
            "cli"
        )
        .session_name("s"),
        "ws"
    );
    assert_eq!(
        core(
            json!({"peerName": "ann", "sessionPeerPrefix": true}),
            &src,
            "cli"
        )
        .session_name("s"),
        "ann-src"
    );
    let manual = json!({"sessions": {src.to_string_lossy(): "pinned"}});
    assert_eq!(core(manual, &src, "cli").session_name("s"), "pinned");
    // A chat platform keys each conversation by its session.
    assert_eq!(
        core(json!({}), &src, "telegram").session_name("tg:42"),
        "tg-42"
    );

    let long = "x".repeat(150);
    let a = core(json!({}), &src, "telegram").session_name(&format!("{long}a"));
    let b = core(json!({}), &src, "telegram").session_name(&format!("{long}b"));
    assert_eq!(a.len(), 100);
    assert_ne!(a, b, "two long keys sharing a prefix stay apart");
}

#[test]
fn ids_are_sanitized_and_text_is_cut_at_words() {
    assert_eq!(sanitize("a b/c:d_e-f"), "a-b-c-d_e-f");
    assert_eq!(cut_at_word("one two three", 9, " …"), "one two …");
    assert_eq!(cut_at_word("short", 9, " …"), "short");
}

#[test]
fn long_messages_go_in_pieces_marked_as_continued() {
    let text = format!("{}\n\n{}", "a ".repeat(40).trim(), "b ".repeat(40).trim());
    let pieces = chunk(&text, 100);
    assert_eq!(pieces.len(), 2, "{pieces:?}");
    assert!(pieces[0].starts_with("a a"));
    assert!(pieces[1].starts_with("[continued] b"));
    assert!(pieces.iter().all(|p| p.chars().count() <= 100));
    assert!(chunk("", 100).is_empty());
    let solid = "z".repeat(250);
    let pieces = chunk(&solid, 100);
    assert_eq!(pieces.len(), 3);
    assert_eq!(
        pieces
            .iter()
            .map(|p| p.trim_start_matches("[continued] ").len())
            .sum::<usize>(),
        250
    );
}
