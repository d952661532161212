#![allow(clippy::unwrap_used)]

use super::*;
use serde_json::json;

fn provider(dir: &Path) -> Arc<Holographic> {
    let settings = HolographicSettings::from_section(&json!({"auto_extract": true}), dir, None);
    Arc::new(Holographic::open(settings).unwrap())
}

#[test]
fn settings_follow_the_reference_section() {
    let home = Path::new("/h");
    let s = HolographicSettings::from_section(&Value::Null, home, None);
    assert_eq!(s.db_path, home.join("memory_store.db"));
    assert!(!s.auto_extract);
    let s = HolographicSettings::from_section(
        &json!({"db_path": "$HERMES_HOME/x/f.db", "auto_extract": "false", "default_trust": "0.8"}),
        home,
        None,
    );
    assert_eq!(s.db_path, Path::new("/h/x/f.db"));
    // As in the reference, a non-empty string is true.
    assert!(s.auto_extract);
    assert!((s.facts.default_trust - 0.8).abs() < 1e-9);
}

#[test]
fn tool_actions_answer_in_the_reference_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let p = provider(dir.path());
    let added = p.fact_store(&json!({"action": "add", "content": "User prefers tabs over spaces", "category": "user_pref"})).unwrap();
    assert_eq!(added, json!({"fact_id": 1, "status": "added"}));
    let found = p
        .fact_store(&json!({"action": "search", "query": "tabs or spaces"}))
        .unwrap();
    assert_eq!(found["count"], 1);
    assert_eq!(found["results"][0]["category"], "user_pref");
    assert_eq!(
        p.fact_store(&json!({"action": "list"})).unwrap()["count"],
        1
    );
    assert_eq!(
        p.fact_store(&json!({"action": "contradict"})).unwrap()["count"],
        0
    );
    assert_eq!(
        p.fact_store(&json!({"action": "add"})).unwrap_err(),
        "Missing required argument: 'content'"
    );
    assert_eq!(
        p.fact_store(&json!({"action": "reason"})).unwrap_err(),
        "reason requires 'entities' list"
    );
    assert_eq!(
        p.fact_store(&json!({"action": "fly"})).unwrap_err(),
        "Unknown action: fly"
    );
    let rated = p
        .fact_feedback(&json!({"action": "helpful", "fact_id": 1}))
        .unwrap();
    assert_eq!(rated["helpful_count"], 1);
    assert_eq!(
        p.fact_feedback(&json!({"action": "helpful", "fact_id": 9}))
            .unwrap_err(),
        "Missing required argument: 'fact_id 9 not found'"
    );
    assert_eq!(
        p.fact_store(&json!({"action": "remove", "fact_id": 1}))
            .unwrap(),
        json!({"removed": true})
    );
}

#[test]
fn recall_prompt_block_mirror_and_extraction() {
    let dir = tempfile::tempdir().unwrap();
    let p = provider(dir.path());
    assert!(p.system_prompt_block().contains("Empty fact store"));
    p.on_memory_write("add", "user", "User's cat is called Miso");
    p.on_memory_write("replace", "memory", "ignored");
    let recall = p.prefetch("what is my cat called?", "s").unwrap();
    assert_eq!(
        recall,
        "## Holographic Memory\n- [0.5] User's cat is called Miso"
    );
    p.on_session_end(&[
        Message::user("I always deploy on Tuesdays"),
        Message::user("hi"),
    ]);
    assert!(p.system_prompt_block().contains("2 facts stored"));
    let tools: Vec<String> = p
        .clone()
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(tools, ["fact_store", "fact_feedback"]);
    assert_eq!(
        p.clone().tools()[0].schema().parameters["required"],
        json!(["action"])
    );
}
