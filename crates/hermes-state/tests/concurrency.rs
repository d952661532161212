#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Two OS processes appending to one `state.db` at the same time.
//!
//! The parent test re-runs this test binary twice, selecting only the `#[ignore]`d child
//! test, with an environment variable naming the database, session and message count.
//! (Works under `cargo test` and `cargo nextest`: both build a libtest-compatible binary.)

use std::process::{Command, Stdio};
use std::time::Instant;

use hermes_protocol::Message;
use hermes_state::session_db::{MessageExtra, NewSession, SearchQuery, SessionDb};

const CHILD_ENV: &str = "HERMES_STATE_CONCURRENCY_CHILD";
const PER_PROCESS: usize = 10_000;

#[test]
#[ignore = "runs only as a child of two_processes_append_concurrently"]
fn concurrency_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut parts = spec.splitn(4, '|');
    let (path, session, count, tag) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let count: usize = count.parse().unwrap();
    let mut db = SessionDb::open(std::path::Path::new(path)).unwrap();
    for i in 0..count {
        let m = Message::user(format!("{tag} message {i} concurrentword"));
        let extra = MessageExtra {
            timestamp: i as f64,
            ..MessageExtra::default()
        };
        if let Err(e) = db.append_message(session, &m, &extra) {
            panic!("child {tag}: append {i} failed: {e}");
        }
    }
    db.close().unwrap();
}

#[test]
fn two_processes_append_concurrently() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let mut db = SessionDb::open(&path).unwrap();
    db.create_session(&NewSession {
        id: "shared".into(),
        source: "cli".into(),
        started_at: 1.0,
        ..NewSession::default()
    })
    .unwrap();
    db.close().unwrap();

    let exe = std::env::current_exe().unwrap();
    let start = Instant::now();
    let children: Vec<_> = ["alpha", "beta"]
        .iter()
        .map(|tag| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "concurrency_child",
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(
                    CHILD_ENV,
                    format!("{}|shared|{PER_PROCESS}|{tag}", path.display()),
                )
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "child failed:\n{text}");
        assert!(
            text.contains("1 passed"),
            "the child test actually ran:\n{text}"
        );
        assert!(!text.to_lowercase().contains("locked"), "{text}");
    }
    let elapsed = start.elapsed();

    let db = SessionDb::open(&path).unwrap();
    assert_eq!(
        db.message_count(Some("shared")).unwrap(),
        2 * PER_PROCESS as u64
    );
    assert_eq!(
        db.get_session("shared").unwrap().unwrap().message_count,
        2 * PER_PROCESS as i64
    );
    for tag in ["alpha", "beta"] {
        let q = SearchQuery {
            limit: 1,
            ..SearchQuery::new(format!("{tag} concurrentword"))
        };
        assert_eq!(db.search(&q).unwrap().len(), 1);
    }
    eprintln!("2 x {PER_PROCESS} concurrent appends took {elapsed:?}");
}
