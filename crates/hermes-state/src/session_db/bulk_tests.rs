use super::super::test_support::{seed, session, temp_db};
use super::*;

/// Three ended CLI sessions a day apart, one still open, one from telegram.
fn populated() -> (tempfile::TempDir, SessionDb) {
    let (dir, mut db) = temp_db();
    let day = 86_400.0;
    seed(&mut db, "old", 1_000.0, &["deploy the api", "done"]);
    seed(
        &mut db,
        "mid",
        1_000.0 + day,
        &["fix the codex bug", "fixed", "thanks"],
    );
    seed(&mut db, "new", 1_000.0 + 2.0 * day, &["hello"]);
    seed(&mut db, "open", 1_000.0, &["still running"]);
    let mut tg = session("tg", 1_000.0);
    tg.source = "telegram".into();
    db.create_session(&tg).unwrap();
    for id in ["old", "mid", "new", "tg"] {
        db.end_session(id, "cli_close").unwrap();
    }
    db.set_title("mid", "Codex fixes").unwrap();
    (dir, db)
}

fn ids(db: &SessionDb, f: &SessionFilter) -> Vec<String> {
    db.bulk_candidates(f)
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect()
}

#[test]
fn filters_and_together_and_never_select_open_sessions() {
    let (_dir, db) = populated();
    let all = ids(&db, &SessionFilter::default());
    assert_eq!(all.len(), 4);
    assert!(!all.contains(&"open".to_owned()));
    let before = SessionFilter {
        started_before: Some(1_000.0 + 86_400.0),
        ..SessionFilter::default()
    };
    let mut early = ids(&db, &before);
    early.sort();
    assert_eq!(early, ["old", "tg"]);
    let cli_early = SessionFilter {
        source: Some("cli".into()),
        ..before.clone()
    };
    assert_eq!(ids(&db, &cli_early), ["old"]);
    let titled = SessionFilter {
        title_like: Some("CODEX".into()),
        ..SessionFilter::default()
    };
    assert_eq!(ids(&db, &titled), ["mid"]);
    let chatty = SessionFilter {
        min_messages: Some(3),
        ..SessionFilter::default()
    };
    assert_eq!(ids(&db, &chatty), ["mid"]);
    let window = SessionFilter {
        started_after: Some(1_000.0 + 86_400.0),
        ..SessionFilter::default()
    };
    assert_eq!(ids(&db, &window), ["mid", "new"], "oldest first");
    assert!(titled.has_non_time_filters());
    assert!(!window.has_non_time_filters());
}

#[test]
fn prune_deletes_matches_and_detaches_their_children() {
    let (_dir, mut db) = populated();
    let mut child = session("child", 1_000.0 + 3.0 * 86_400.0);
    child.parent_session_id = Some("old".into());
    db.create_session(&child).unwrap();
    let f = SessionFilter {
        source: Some("cli".into()),
        started_before: Some(1_000.0 + 86_400.0),
        ..SessionFilter::default()
    };
    assert_eq!(db.prune_matching(&f).unwrap(), 1);
    assert!(db.get_session("old").unwrap().is_none());
    assert_eq!(db.message_count(Some("old")).unwrap(), 0);
    let child = db.get_session("child").unwrap().unwrap();
    assert_eq!(child.parent_session_id, None);
    assert!(db.get_session("tg").unwrap().is_some());
}

#[test]
fn archive_hides_lineages_idempotently_and_vacuum_keeps_data() {
    let (_dir, mut db) = populated();
    // "mid" was continued after compression by "mid2": one conversation.
    db.reopen_session("mid").unwrap();
    db.end_session("mid", "compression").unwrap();
    let mut cont = session("mid2", 1_000.0 + 86_400.0 + 60.0);
    cont.parent_session_id = Some("mid".into());
    db.create_session(&cont).unwrap();
    let f = SessionFilter {
        title_like: Some("codex".into()),
        ..SessionFilter::default()
    };
    assert_eq!(db.archive_matching(&f).unwrap(), 1);
    assert!(db.get_session("mid").unwrap().unwrap().archived);
    assert!(
        db.get_session("mid2").unwrap().unwrap().archived,
        "the continuation too"
    );
    assert_eq!(db.archive_matching(&f).unwrap(), 0, "already archived");
    let archived_only = SessionFilter {
        archived: Some(true),
        ..SessionFilter::default()
    };
    assert_eq!(ids(&db, &archived_only), ["mid"]);
    assert!(db.set_archived("mid", false).unwrap());
    assert!(!db.get_session("mid2").unwrap().unwrap().archived);

    let before = db.message_count(None).unwrap();
    assert_eq!(db.vacuum().unwrap(), 2);
    assert_eq!(db.message_count(None).unwrap(), before);
}
