use std::time::{Duration, Instant};

use hermes_protocol::Message;

use super::super::test_support::{at, session, temp_db};
use super::super::{DbError, SessionDb};
use super::*;

#[test]
fn jitter_stays_in_bounds_and_varies() {
    let mut j = Jitter::from_time();
    let delays: Vec<Duration> = (0..1000).map(|_| j.delay()).collect();
    assert!(delays.iter().all(|d| (20..=150).contains(&d.as_millis())));
    let min = delays.iter().min().unwrap().as_millis();
    let max = delays.iter().max().unwrap().as_millis();
    assert!(min < 40 && max > 130, "spread {min}..{max}");
}

#[test]
fn wal_refusal_falls_back_to_delete() {
    // An in-memory database answers "memory" to journal_mode=WAL, like a filesystem that
    // cannot do WAL answers with its old mode.
    let (_conn, mode) = connect_rw(Path::new(":memory:")).unwrap();
    assert_eq!(mode, JournalMode::Delete);
}

#[test]
fn writes_wait_for_a_competing_writer() {
    let (dir, mut db) = temp_db();
    db.create_session(&session("s", 1.0)).unwrap();
    let path = dir.path().join("state.db");
    let holder = std::thread::spawn(move || {
        let other = Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        other.execute_batch("COMMIT").unwrap();
    });
    std::thread::sleep(Duration::from_millis(100));
    let start = Instant::now();
    db.append_message("s", &Message::user("waited"), &at(2.0))
        .unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(1000),
        "it had to wait past the busy timeout"
    );
    holder.join().unwrap();
    assert_eq!(db.message_count(Some("s")).unwrap(), 1);
}

#[test]
fn a_writer_that_never_lets_go_yields_busy() {
    let (dir, mut db) = temp_db();
    db.create_session(&session("s", 1.0)).unwrap();
    db.conn.busy_timeout(Duration::from_millis(1)).unwrap();
    let other = Connection::open(dir.path().join("state.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let err = db
        .append_message("s", &Message::user("never"), &at(2.0))
        .unwrap_err();
    assert!(matches!(err, DbError::Busy { attempts: 15 }), "{err}");
    assert!(err.is_busy());
    other.execute_batch("ROLLBACK").unwrap();
    db.append_message("s", &Message::user("now"), &at(3.0))
        .unwrap();
}

#[test]
fn readers_do_not_block_writers() {
    let (dir, mut db) = temp_db();
    db.create_session(&session("s", 1.0)).unwrap();
    let reader = SessionDb::open_read_only(&dir.path().join("state.db")).unwrap();
    reader.conn.execute_batch("BEGIN").unwrap();
    assert_eq!(reader.message_count(None).unwrap(), 0);
    db.append_message("s", &Message::user("while reading"), &at(2.0))
        .unwrap();
    assert_eq!(reader.message_count(None).unwrap(), 0, "snapshot isolation");
    reader.conn.execute_batch("COMMIT").unwrap();
    assert_eq!(reader.message_count(None).unwrap(), 1);
}

#[test]
fn durability_is_switchable() {
    let (_dir, mut db) = temp_db();
    let sync = |db: &SessionDb| {
        db.conn
            .query_row("PRAGMA synchronous", [], |r| r.get::<_, i64>(0))
            .unwrap()
    };
    assert_eq!(sync(&db), 1, "NORMAL by default under WAL");
    db.set_durability(Durability::Full).unwrap();
    assert_eq!(sync(&db), 2);
    db.set_durability(Durability::Normal).unwrap();
    assert_eq!(sync(&db), 1);
    db.set_durability(Durability::Full).unwrap();
    assert_eq!(sync(&db), 2);
}
