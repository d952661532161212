#![allow(clippy::unwrap_used)]

use super::*;
use crate::memory::hrr;

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

#[test]
fn facts_keep_vectors_and_category_banks_as_the_reference_writes_them() {
    let (dir, store) = store();
    let a = store
        .add("Peppi maintains the Billing Service", "project", "")
        .unwrap();
    store
        .add("Oskar wrote the Billing Service", "project", "")
        .unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("memory_store.db")).unwrap();
    let (bytes, dim, count): (Vec<u8>, i64, i64) = conn
        .query_row(
            "SELECT vector, dim, fact_count FROM memory_banks WHERE bank_name = 'cat:project'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((bytes.len(), dim, count), (8 * 1024, 1024, 2));
    let stored: Vec<u8> = conn
        .query_row(
            "SELECT hrr_vector FROM facts WHERE fact_id = ?1",
            [a],
            |r| r.get(0),
        )
        .unwrap();
    let expected = hrr::fact(
        "Peppi maintains the Billing Service",
        &["Billing Service".to_owned()],
        1024,
    );
    assert_eq!(hrr::from_bytes(&stored), expected);
    // Moving the last fact out of a category drops its bank.
    store.update(a, None, None, None, Some("general")).unwrap();
    let project: i64 = conn
        .query_row(
            "SELECT fact_count FROM memory_banks WHERE bank_name = 'cat:project'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(project, 1);
    assert!(store.remove(a).unwrap());
    let general: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM memory_banks WHERE bank_name = 'cat:general'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(general, 0);
}

#[test]
fn structural_queries_rank_every_vectored_fact_and_contradict_pairs_shared_entities() {
    let (_dir, store) = store();
    store
        .add("Peppi maintains the Billing Service", "project", "")
        .unwrap();
    store
        .add("Peppi never touches the Billing Service", "project", "")
        .unwrap();
    store
        .add("The office closes at six", "general", "")
        .unwrap();
    for rows in [
        store.probe("Billing Service", None, 10).unwrap(),
        store.related("Billing Service", None, 10).unwrap(),
        store
            .reason(&["Billing Service", "Peppi"], None, 10)
            .unwrap(),
    ] {
        assert_eq!(rows.len(), 3, "{rows:?}");
        let scores: Vec<f64> = rows.iter().map(|r| r["score"].as_f64().unwrap()).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
        assert!(
            scores.iter().all(|s| (0.0..=0.5).contains(s)),
            "trust 0.5 bounds: {scores:?}"
        );
    }
    assert_eq!(
        store
            .probe("Billing Service", Some("project"), 1)
            .unwrap()
            .len(),
        1
    );
    let pairs = store.contradict(None, 0.0, 10).unwrap();
    assert_eq!(
        pairs.len(),
        1,
        "only the two facts sharing an entity pair up: {pairs:?}"
    );
    assert_eq!(
        pairs[0]["shared_entities"],
        serde_json::json!(["billing service"])
    );
    assert_eq!(pairs[0]["entity_overlap"], 1.0);
    assert!(pairs[0]["fact_a"].get("retrieval_count").is_none());
    let sim = pairs[0]["content_similarity"].as_f64().unwrap();
    let score = pairs[0]["contradiction_score"].as_f64().unwrap();
    assert!(
        (score - (1.0 - (sim + 1.0) / 2.0)).abs() < 0.002,
        "{score} {sim}"
    );
}
