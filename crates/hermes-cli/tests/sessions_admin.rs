//! `hermes sessions prune | archive | optimize | repair` through the binary, on a
//! real state.db: the reference's filter flags, previews, refusals and repair.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{SystemTime, UNIX_EPOCH};

use hermes_protocol::Message;
use hermes_state::session_db::{MessageExtra, NewSession, SessionDb};
use support::*;

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// An old ended CLI session titled "codex fixes", a recent ended telegram one,
/// and an old one still open.
fn seeded() -> Sandbox {
    let sb = Sandbox::start();
    let mut db = SessionDb::open(&sb.home.path().join("state.db")).unwrap();
    let day = 86_400.0;
    for (id, source, age, ended) in [
        ("s_old", "cli", 10.0 * day, true),
        ("s_recent", "telegram", 3_600.0, true),
        ("s_open", "cli", 10.0 * day, false),
    ] {
        db.create_session(&NewSession {
            id: id.into(),
            source: source.into(),
            model: Some("test/model".into()),
            started_at: now() - age,
            ..NewSession::default()
        })
        .unwrap();
        let extra = MessageExtra {
            timestamp: now() - age + 1.0,
            ..MessageExtra::default()
        };
        db.append_message(
            id,
            &Message::user(format!("kubernetes rollout {id}")),
            &extra,
        )
        .unwrap();
        if ended {
            db.end_session(id, "cli_close").unwrap();
        }
    }
    db.set_title("s_old", "codex fixes").unwrap();
    db.close().unwrap();
    sb
}

fn run(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.command().arg("sessions").args(args).output().unwrap()
}

fn exists(sb: &Sandbox, id: &str) -> bool {
    SessionDb::open_read_only(&sb.home.path().join("state.db"))
        .unwrap()
        .get_session(id)
        .unwrap()
        .is_some()
}

#[test]
fn prune_previews_asks_and_deletes_only_what_matches() {
    let sb = seeded();
    let dry = run(&sb, &["prune", "--older-than", "2d", "--dry-run"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    let text = stdout(&dry);
    assert!(
        text.contains("1 session(s) match") && text.contains("s_old"),
        "{text}"
    );
    assert!(
        !text.contains("s_open"),
        "open sessions are never candidates: {text}"
    );
    assert!(text.contains("Dry run: nothing deleted."), "{text}");
    assert!(exists(&sb, "s_old"));

    // Without --yes and with nobody to ask, nothing happens.
    let refused = run(&sb, &["prune", "--older-than", "2d"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("pass --yes"),
        "{}",
        stderr(&refused)
    );
    assert!(exists(&sb, "s_old"));

    let by_source = run(&sb, &["prune", "--source", "telegram", "--yes"]);
    assert!(
        stdout(&by_source).contains("Pruned 1 session(s)."),
        "{}",
        stdout(&by_source)
    );
    assert!(!exists(&sb, "s_recent"), "a filter alone matches every age");
    assert!(exists(&sb, "s_old"));

    let bad = run(&sb, &["prune", "--before", "next tuesday", "--yes"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("invalid value for --before"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn archive_hides_sessions_and_prune_leaves_them_unless_asked() {
    let sb = seeded();
    let everything = run(&sb, &["archive", "--yes"]);
    assert!(!everything.status.success());
    assert!(stderr(&everything).contains("refusing to archive every ended session"));

    let archived = run(&sb, &["archive", "--title", "CODEX", "--yes"]);
    assert!(archived.status.success(), "{}", stderr(&archived));
    assert!(
        stdout(&archived).contains("Archived 1 session(s)"),
        "{}",
        stdout(&archived)
    );
    let listed = stdout(&run(&sb, &["list"]));
    assert!(
        !listed.contains("s_old") && listed.contains("s_recent"),
        "{listed}"
    );

    let skipped = run(&sb, &["prune", "--older-than", "2d", "--yes"]);
    assert!(
        stdout(&skipped).contains("No sessions match"),
        "{}",
        stdout(&skipped)
    );
    let pruned = run(
        &sb,
        &["prune", "--older-than", "2d", "--include-archived", "--yes"],
    );
    assert!(
        stdout(&pruned).contains("Pruned 1 session(s)."),
        "{}",
        stdout(&pruned)
    );
    assert!(!exists(&sb, "s_old"));
}

#[test]
fn optimize_merges_the_indexes_and_keeps_the_data() {
    let sb = seeded();
    let out = run(&sb, &["optimize"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Merged 2 FTS index(es)."), "{text}");
    assert!(text.contains("Database size:"), "{text}");
    let hits = stdout(&run(&sb, &["search", "kubernetes"]));
    assert!(
        hits.contains("s_old") && hits.contains("s_recent"),
        "{hits}"
    );
}

#[test]
fn repair_checks_backs_up_and_rebuilds_a_damaged_index() {
    let sb = seeded();
    let path = sb.home.path().join("state.db");
    let healthy = run(&sb, &["repair", "--check-only"]);
    assert!(healthy.status.success());
    assert!(
        stdout(&healthy).contains("opens cleanly"),
        "{}",
        stdout(&healthy)
    );

    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE messages_fts_data SET block = X'00' WHERE id = 10",
            [],
        )
        .unwrap();
    let check = run(&sb, &["repair", "--check-only"]);
    assert!(!check.status.success(), "a failed check is a failing exit");
    assert!(
        stdout(&check).contains("does not open cleanly"),
        "{}",
        stdout(&check)
    );

    let repaired = run(&sb, &["repair"]);
    assert!(repaired.status.success(), "{}", stdout(&repaired));
    let text = stdout(&repaired);
    assert!(
        text.contains("backup: ") && text.contains("Repaired: 3 sessions kept."),
        "{text}"
    );
    let backups = std::fs::read_dir(sb.home.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("state.db.bak-")
        })
        .count();
    assert!(backups >= 1);
    let hits = stdout(&run(&sb, &["search", "kubernetes"]));
    assert!(hits.contains("s_old"), "search works again: {hits}");
}
