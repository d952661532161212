use hermes_protocol::Message;

use super::test_support::{at, seed, session, temp_db};
use super::*;

/// `sqlite_master` in the format of `tests/fixtures/schema_v22.sql` (dumped from the reference).
pub(crate) fn dump_schema(conn: &Connection) -> String {
    let mut stmt = conn
        .prepare(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(format!(
                "-- {} {}\n{};",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?
            ))
        })
        .unwrap();
    rows.map(Result::unwrap).collect::<Vec<_>>().join("\n")
}

#[test]
fn fresh_schema_matches_the_reference_byte_for_byte() {
    let (_dir, db) = temp_db();
    let expected = include_str!("../../tests/fixtures/schema_v22.sql");
    assert_eq!(dump_schema(&db.conn), expected.trim_end());
    let v: i64 = db
        .conn
        .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 22);
    let rows: i64 = db
        .conn
        .query_row("SELECT COUNT(*) FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1);
}

#[test]
fn pragmas_follow_the_reference_except_synchronous() {
    let (_dir, db) = temp_db();
    assert_eq!(db.journal_mode(), JournalMode::Wal);
    let fk: i64 = db
        .conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1);
    let sync: i64 = db
        .conn
        .query_row("PRAGMA synchronous", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sync, 1, "synchronous=NORMAL under WAL (see Durability)");
    let timeout: i64 = db
        .conn
        .query_row("PRAGMA busy_timeout", [], |r| r.get(0))
        .unwrap();
    assert_eq!(timeout, 1000);
    assert!(db.fts_enabled());
}

#[test]
fn the_page_cache_is_32_mib_until_limited() {
    let (_dir, db) = temp_db();
    let cache = |db: &SessionDb| {
        db.conn
            .query_row("PRAGMA cache_size", [], |r| r.get::<_, i64>(0))
            .unwrap()
    };
    assert_eq!(cache(&db), -32 * 1024);
    db.limit_page_cache(8 * 1024).unwrap();
    assert_eq!(cache(&db), -8 * 1024);
}

#[test]
fn open_creates_missing_parent_directories() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/c/state.db");
    let db = SessionDb::open(&path).unwrap();
    assert_eq!(db.path(), path.as_path());
    assert!(path.exists());
}

#[test]
fn close_and_reopen_keeps_everything_and_truncates_the_wal() {
    let (dir, mut db) = temp_db();
    let path = dir.path().join("state.db");
    seed(&mut db, "s1", 100.0, &["hello there", "general kenobi"]);
    db.set_title("s1", "Greetings").unwrap();
    db.close().unwrap();
    let wal = dir.path().join("state.db-wal");
    assert!(!wal.exists() || std::fs::metadata(&wal).unwrap().len() == 0);

    let db = SessionDb::open(&path).unwrap();
    assert_eq!(db.messages("s1").unwrap().len(), 2);
    assert_eq!(
        db.get_session("s1").unwrap().unwrap().title.as_deref(),
        Some("Greetings")
    );
    assert_eq!(db.search(&SearchQuery::new("kenobi")).unwrap().len(), 1);
    // Opening twice more is idempotent: same schema, same single version row.
    drop(db);
    let db = SessionDb::open(&path).unwrap();
    let expected = include_str!("../../tests/fixtures/schema_v22.sql");
    assert_eq!(tests::dump_schema(&db.conn), expected.trim_end());
}

#[test]
fn read_only_reads_and_refuses_writes() {
    let (dir, mut db) = temp_db();
    seed(&mut db, "s1", 100.0, &["read me"]);
    db.close().unwrap();
    let mut ro = SessionDb::open_read_only(&dir.path().join("state.db")).unwrap();
    assert_eq!(ro.messages("s1").unwrap().len(), 1);
    assert_eq!(ro.search(&SearchQuery::new("read")).unwrap().len(), 1);
    let err = ro
        .append_message("s1", &Message::user("x"), &at(1.0))
        .unwrap_err();
    assert!(matches!(err, DbError::ReadOnly), "{err}");
    assert!(matches!(
        ro.create_session(&session("s2", 1.0)),
        Err(DbError::ReadOnly)
    ));
    ro.close().unwrap();
}

#[test]
fn read_only_on_missing_file_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = SessionDb::open_read_only(&dir.path().join("nope.db")).unwrap_err();
    assert!(matches!(err, DbError::Open { .. }), "{err}");
    assert!(err.to_string().contains("nope.db"));
}

#[test]
fn garbage_file_is_reported_not_clobbered() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::write(
        &path,
        b"this is not a database at all, just text padding ........",
    )
    .unwrap();
    let err = SessionDb::open(&path).unwrap_err();
    assert!(!err.to_string().is_empty());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"this is not a database at all, just text padding ........"
    );
}

#[test]
fn meta_round_trips() {
    let (_dir, mut db) = temp_db();
    assert_eq!(db.get_meta("k").unwrap(), None);
    db.set_meta("k", "v1").unwrap();
    db.set_meta("k", "v2").unwrap();
    assert_eq!(db.get_meta("k").unwrap().as_deref(), Some("v2"));
}

#[test]
fn corrupt_fts_index_is_backed_up_and_rebuilt_at_open() {
    let (dir, mut db) = temp_db();
    let path = dir.path().join("state.db");
    seed(
        &mut db,
        "s1",
        100.0,
        &["the quick brown fox", "jumps over the lazy dog"],
    );
    db.conn
        .execute("DELETE FROM messages_fts_data WHERE id = 10", [])
        .unwrap();
    db.close().unwrap();

    let db = SessionDb::open(&path).unwrap();
    assert_eq!(db.backups().len(), 1, "a backup is taken before repairing");
    let backup = &db.backups()[0];
    assert!(
        backup
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("state.db.bak-")
    );
    assert!(backup.exists());
    assert_eq!(db.search(&SearchQuery::new("fox")).unwrap().len(), 1);
    assert_eq!(db.search(&SearchQuery::new("lazy")).unwrap().len(), 1);
    assert_eq!(db.messages("s1").unwrap().len(), 2);
}

#[test]
fn duplicated_schema_entry_is_repaired_at_open() {
    let (dir, mut db) = temp_db();
    let path = dir.path().join("state.db");
    seed(&mut db, "s1", 100.0, &["survives schema damage"]);
    db.conn
        .execute_batch(
            "PRAGMA writable_schema=ON;
             INSERT INTO sqlite_master SELECT * FROM sqlite_master WHERE name = 'messages_fts';
             PRAGMA writable_schema=OFF;",
        )
        .unwrap();
    db.close().unwrap();

    let mut db = SessionDb::open(&path).unwrap();
    assert_eq!(db.backups().len(), 1);
    assert_eq!(db.messages("s1").unwrap().len(), 1);
    assert_eq!(db.search(&SearchQuery::new("damage")).unwrap().len(), 1);
    db.append_message("s1", &Message::user("after repair"), &at(200.0))
        .unwrap();
    assert_eq!(db.search(&SearchQuery::new("repair")).unwrap().len(), 1);
}

#[test]
fn truncated_fts_structure_is_caught_by_the_write_probe() {
    let (dir, mut db) = temp_db();
    let path = dir.path().join("state.db");
    seed(&mut db, "s1", 100.0, &["needle in a haystack"]);
    db.conn
        .execute(
            "UPDATE messages_fts_data SET block = X'00' WHERE id = 10",
            [],
        )
        .unwrap();
    db.close().unwrap();
    let db = SessionDb::open(&path).unwrap();
    assert_eq!(db.backups().len(), 1);
    assert_eq!(db.search(&SearchQuery::new("needle")).unwrap().len(), 1);
}

#[test]
fn verify_fts_detects_and_rebuilds() {
    let (_dir, mut db) = temp_db();
    seed(&mut db, "s1", 100.0, &["alpha beta", "gamma delta"]);
    assert!(!db.verify_fts().unwrap());
    // Make the index disagree with its content table.
    db.conn
        .execute(
            "UPDATE messages_fts_content SET c0 = 'zeta eta' WHERE id = 1",
            [],
        )
        .unwrap();
    assert!(db.verify_fts().unwrap());
    assert_eq!(db.backups().len(), 1);
    assert_eq!(db.search(&SearchQuery::new("alpha")).unwrap().len(), 1);
    assert!(!db.verify_fts().unwrap());
}

#[test]
fn write_failing_on_corrupt_fts_is_repaired_once_and_retried() {
    let (_dir, mut db) = temp_db();
    seed(&mut db, "s1", 100.0, &["before corruption"]);
    db.conn
        .execute(
            "UPDATE messages_fts_data SET block = X'00' WHERE id = 10",
            [],
        )
        .unwrap();
    let id = db
        .append_message("s1", &Message::user("after corruption"), &at(300.0))
        .unwrap();
    assert!(id > 0);
    assert_eq!(db.search(&SearchQuery::new("corruption")).unwrap().len(), 2);
}

#[test]
fn maintenance_cadence_does_not_disturb_writes() {
    let (_dir, mut db) = temp_db();
    db.create_session(&session("s1", 1.0)).unwrap();
    for i in 0..1001 {
        db.append_message("s1", &Message::user(format!("row {i}")), &at(f64::from(i)))
            .unwrap();
    }
    assert_eq!(db.message_count(Some("s1")).unwrap(), 1001);
    assert_eq!(db.get_session("s1").unwrap().unwrap().message_count, 1001);
    assert_eq!(db.search(&SearchQuery::new("row")).unwrap().len(), 20);
    // The 1 000th write ran the bounded 'merge' on both indexes; both stay sound.
    for table in ["messages_fts", "messages_fts_trigram"] {
        db.conn
            .execute(
                &format!("INSERT INTO {table}({table}, rank) VALUES('integrity-check', 1)"),
                [],
            )
            .unwrap();
    }
    assert_eq!(db.optimize_fts().unwrap(), 2);
    assert_eq!(db.rebuild_fts().unwrap(), 2);
}
