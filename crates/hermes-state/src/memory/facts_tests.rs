#![allow(clippy::unwrap_used)]

use super::*;

fn store() -> (tempfile::TempDir, FactStore) {
    let dir = tempfile::tempdir().unwrap();
    let store =
        FactStore::open(&dir.path().join("memory_store.db"), FactSettings::default()).unwrap();
    (dir, store)
}

#[test]
fn facts_are_found_by_their_words_and_duplicates_keep_their_id() {
    let (_dir, store) = store();
    let vim = store
        .add("User prefers vim over emacs", "user_pref", "editor")
        .unwrap();
    store
        .add("The project deploys with Ansible", "project", "")
        .unwrap();
    assert_eq!(
        store
            .add("  User prefers vim over emacs ", "general", "")
            .unwrap(),
        vim
    );
    assert_eq!(store.count(), 2);
    let found = store.search("which editor does the user like? vim", None, 0.3, 5);
    assert_eq!(found[0]["fact_id"], vim, "{found:?}");
    assert!(found[0]["score"].as_f64().unwrap() > 0.0);
    assert!(store.search("kubernetes", None, 0.3, 5).is_empty());
    // A query of stopwords only falls back to the raw text, which FTS5 may refuse: no results, no error.
    assert!(store.search("the and (", None, 0.3, 5).is_empty());
}

#[test]
fn trust_moves_with_feedback_and_low_trust_facts_drop_out_of_search() {
    let (_dir, store) = store();
    let id = store
        .add("Deploys happen on Fridays", "project", "")
        .unwrap();
    let up = store.feedback(id, true).unwrap();
    assert_eq!(up["helpful_count"], 1);
    assert!((up["new_trust"].as_f64().unwrap() - 0.55).abs() < 1e-9);
    for _ in 0..3 {
        store.feedback(id, false).unwrap();
    }
    // 0.5 + 0.05 − 3 × 0.10 = 0.25, under the 0.3 floor.
    assert!(store.search("deploys fridays", None, 0.3, 5).is_empty());
    assert_eq!(store.list(None, 0.0, 10).unwrap().len(), 1);
    assert_eq!(
        store.feedback(999, true).unwrap_err(),
        "'fact_id 999 not found'"
    );
}

#[test]
fn updates_and_removals_keep_the_index_in_step() {
    let (_dir, store) = store();
    let id = store
        .add("Alice Smith owns the billing service", "project", "")
        .unwrap();
    assert!(
        store
            .update(
                id,
                Some("Bob Jones owns the billing service"),
                Some(0.2),
                None,
                None
            )
            .unwrap()
    );
    assert!(store.search("alice", None, 0.0, 5).is_empty());
    let found = store.search("bob billing", None, 0.0, 5);
    assert_eq!(found[0]["trust_score"], 0.7);
    assert!(store.remove(id).unwrap());
    assert!(!store.remove(id).unwrap());
    assert!(!store.update(id, None, None, None, None).unwrap());
    assert!(store.search("bob", None, 0.0, 5).is_empty());
}

#[test]
fn entities_are_names_quotes_and_aliases() {
    assert_eq!(
        extract_entities("John Doe uses \"neovim\" at 'Acme'"),
        vec!["John Doe", "neovim", "Acme"]
    );
    assert_eq!(extract_entities("bob aka robert"), vec!["bob", "robert"]);
}
