//! The binary on a PostgreSQL session store (`sessiondb.provider:
//! postgresql`): turns recorded there and resumed from there, a database
//! that cannot be reached (or a wrong password, or a newer schema) stops it
//! with words that name the host and never the password, and `hermes
//! sessions migrate` carries a reference-written state.db there and back.
//! Needs `HERMES_TEST_DATABASE_URL` (CI starts PostgreSQL and sets it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::BTreeMap;

use hermes_mock::Reply;
use hermes_postgres::testing::Scratch;
use hermes_session::SessionStore;
use hermes_state::session_db::{ListFilter, SearchQuery, SessionDb};
use support::*;

fn database() -> Option<String> {
    hermes_postgres::testing::database_url_or_skip()
}

fn on_postgres(sb: &Sandbox, scratch: &Scratch) {
    sb.add_config(&format!(
        "sessiondb:\n  provider: postgresql\n  schema: {}\n",
        scratch.schema
    ));
}

#[test]
fn turns_are_recorded_in_postgresql_and_resume_from_there() {
    let Some(url) = database() else { return };
    let scratch = Scratch::new(&url).unwrap();
    let sb = Sandbox::start();
    on_postgres(&sb, &scratch);
    sb.mock.push(Reply::text("Paris."));
    let out = sb
        .command()
        .env("HERMES_DATABASE_URL", &url)
        .args(["chat", "-q", "capital of France?", "-Q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let id = session_id_of(&out);
    assert!(
        !sb.home.path().join("state.db").exists(),
        "nothing went to state.db"
    );
    let texts: Vec<String> = scratch
        .store
        .conversation(&id)
        .unwrap()
        .iter()
        .map(|m| m.text().to_owned())
        .collect();
    assert_eq!(texts, ["capital of France?", "Paris."]);
    let row = scratch.store.session(&id).unwrap().unwrap();
    assert_eq!(row.message_count, 2);
    assert!(row.api_call_count >= 1, "usage recorded: {row:?}");

    sb.mock.push(Reply::text("Lyon is second."));
    let again = sb
        .command()
        .env("HERMES_DATABASE_URL", &url)
        .args(["chat", "-q", "and the second city?", "-Q", "--resume", &id])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    let last = sb.mock.chat_requests().pop().unwrap();
    assert!(
        last.to_string().contains("capital of France?"),
        "the resumed turn carries the history from PostgreSQL"
    );
    assert_eq!(scratch.store.conversation(&id).unwrap().len(), 4);

    // `hermes sessions` reads the database too.
    let cli = |args: &[&str]| {
        let out = sb
            .command()
            .env("HERMES_DATABASE_URL", &url)
            .arg("sessions")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    assert!(cli(&["list"]).contains(&id));
    assert!(cli(&["search", "France"]).contains(&id));
    assert!(cli(&["show", &id]).contains("Lyon is second."));
    assert!(cli(&["stats"]).contains("Messages:  4"));

    // The model's recall reads the database too: a new session finds the first.
    sb.mock.push(Reply::tool_call(
        "call_1",
        "session_search",
        &serde_json::json!({"query": "France"}).to_string(),
    ));
    sb.mock.push(Reply::text("Found it."));
    let recall = sb
        .command()
        .env("HERMES_DATABASE_URL", &url)
        .args(["chat", "-q", "what did we say about France?", "-Q"])
        .output()
        .unwrap();
    assert!(recall.status.success(), "{}", stderr(&recall));
    let last = sb.mock.chat_requests().pop().unwrap();
    let result = messages_with_role(&last, "tool")
        .last()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default();
    assert!(
        result.contains(&id) && result.contains("Paris"),
        "session_search found the first session in PostgreSQL: {result}"
    );
}

#[test]
fn an_unreachable_database_or_a_wrong_password_stops_it_without_the_password() {
    let Some(url) = database() else { return };
    let sb = Sandbox::start();
    sb.add_config("sessiondb:\n  provider: postgresql\n");
    let port = free_port();
    let cases = [
        (
            format!("postgresql://hermes:pw-not-here@127.0.0.1:{port}/team"),
            format!("127.0.0.1:{port}/team"),
            "pw-not-here",
        ),
        (
            wrong_password(&url),
            "127.0.0.1".to_owned(),
            "definitely-wrong-pw",
        ),
    ];
    for (bad, named, secret) in cases {
        sb.mock.push(Reply::text("never asked"));
        let out = sb
            .command()
            .env("HERMES_DATABASE_URL", &bad)
            .args(["chat", "-q", "hello", "-Q"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(&named), "names the database: {err}");
        assert!(err.contains("PostgreSQL"), "{err}");
        assert!(!err.contains(secret), "the password leaked: {err}");
        assert!(
            !sb.home.path().join("state.db").exists(),
            "no quiet fall back to state.db"
        );
    }
    assert!(sb.mock.chat_requests().is_empty(), "no turn ran");
}

fn wrong_password(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (userinfo, host) = rest.split_once('@').unwrap();
    let user = userinfo.split(':').next().unwrap();
    format!("{scheme}://{user}:definitely-wrong-pw@{host}")
}

#[test]
fn a_schema_from_a_newer_hermes_is_refused_with_its_version() {
    let Some(url) = database() else { return };
    let scratch = Scratch::new(&url).unwrap();
    {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        client
            .batch_execute(&format!(
                "UPDATE {}.schema_version SET version = 23",
                scratch.schema
            ))
            .unwrap();
    }
    let sb = Sandbox::start();
    on_postgres(&sb, &scratch);
    let out = sb
        .command()
        .env("HERMES_DATABASE_URL", &url)
        .args(["chat", "-q", "hello", "-Q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("version 23") && err.contains("22"), "{err}");
}

/// Sessions, their messages and what a few searches find, from a state.db.
fn picture(path: &std::path::Path) -> (Vec<String>, BTreeMap<String, String>, Vec<Vec<i64>>) {
    let db = SessionDb::open_read_only(path).unwrap();
    let sessions: Vec<String> = db
        .list_sessions(&ListFilter {
            limit: 1000,
            ..ListFilter::default()
        })
        .unwrap()
        .iter()
        .map(|s| format!("{} {:?} {:?} {}", s.id, s.title, s.model, s.message_count))
        .collect();
    let mut messages = BTreeMap::new();
    for s in db
        .list_sessions(&ListFilter {
            limit: 1000,
            ..ListFilter::default()
        })
        .unwrap()
    {
        messages.insert(s.id.clone(), format!("{:?}", db.messages(&s.id).unwrap()));
    }
    let searches = ["hello", "the", "tool*", "egra"]
        .iter()
        .map(|q| {
            db.search(&SearchQuery::new(*q))
                .unwrap()
                .iter()
                .map(|h| h.message_id)
                .collect()
        })
        .collect();
    (sessions, messages, searches)
}

#[test]
fn sessions_migrate_carries_a_reference_state_db_there_and_back() {
    let Some(url) = database() else { return };
    let scratch = Scratch::new(&url).unwrap();
    let sb = Sandbox::start();
    std::fs::copy(
        fixture("reference_state.db"),
        sb.home.path().join("state.db"),
    )
    .unwrap();
    let original = picture(&sb.home.path().join("state.db"));
    assert!(!original.0.is_empty());
    for _ in 0..2 {
        // Twice: the second run updates, it does not double.
        let out = sb.run(&[
            "sessions",
            "migrate",
            "--to",
            &url,
            "--schema",
            &scratch.schema,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.contains("Copied 3 sessions, 8 messages") && text.contains("Verified"),
            "{text}"
        );
        assert!(!text.contains("hermes-test"), "no password in the output");
    }
    assert_eq!(scratch.store.counts().unwrap(), (3, 8));
    let back = sb.work_path("back.db");
    let out = sb.run(&[
        "sessions",
        "migrate",
        "--to",
        back.to_str().unwrap(),
        "--from",
        &url,
        "--schema",
        &scratch.schema,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(picture(&back), original);
}

/// A PostgreSQL cluster of the test's own (Debian's `pg_createcluster`, as
/// root), so it can be stopped without disturbing other tests; dropped at the end.
struct OwnCluster {
    version: String,
    name: String,
    port: u16,
}

impl OwnCluster {
    fn start() -> Option<Self> {
        let root = std::fs::metadata("/proc/self").is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid() == 0
        });
        let version = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .max_by_key(|v| v.parse::<u32>().unwrap_or(0))?;
        if !root || !std::path::Path::new("/usr/bin/pg_createcluster").exists() {
            return None;
        }
        let cluster = Self {
            version,
            name: format!("hermes_loss_{}", std::process::id()),
            port: free_port(),
        };
        let ok = std::process::Command::new("pg_createcluster")
            .args([
                &cluster.version,
                &cluster.name,
                "-p",
                &cluster.port.to_string(),
            ])
            .stdout(std::process::Stdio::null())
            .status()
            .ok()?
            .success();
        if !ok || !cluster.ctl("start") {
            return None;
        }
        let sql = "ALTER USER postgres PASSWORD 'loss-test'";
        std::process::Command::new("su")
            .args([
                "postgres",
                "-c",
                &format!("psql -q -p {} -c \"{sql}\"", cluster.port),
            ])
            .status()
            .ok()?;
        Some(cluster)
    }

    fn ctl(&self, action: &str) -> bool {
        let mut cmd = std::process::Command::new("pg_ctlcluster");
        cmd.args([&self.version, &self.name, action]);
        if action == "stop" {
            cmd.args(["-m", "immediate"]);
        }
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn url(&self) -> String {
        format!(
            "postgresql://postgres:loss-test@127.0.0.1:{}/postgres",
            self.port
        )
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new("pg_dropcluster")
            .args(["--stop", &self.version, &self.name])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

#[test]
fn a_database_that_goes_away_mid_turn_fails_that_turn_and_the_gateway_reconnects() {
    use support::gateway::{auth, gateway_with_env, http_try};
    if database().is_none() {
        return;
    }
    let Some(cluster) = OwnCluster::start() else {
        eprintln!("SKIPPED: needs root and Debian's pg_createcluster");
        return;
    };
    let url = cluster.url();
    let sb = Sandbox::start();
    let gw = gateway_with_env(
        &sb,
        "sessiondb:\n  provider: postgresql\n",
        &[("HERMES_DATABASE_URL", url.as_str())],
    );
    let chat = |text: &str| {
        let (k, v) = auth();
        let body = serde_json::json!({"messages": [{"role": "user", "content": text}]}).to_string();
        http_try(
            gw.port,
            "POST",
            "/v1/chat/completions",
            &[(k, &v), ("X-Hermes-Session-Id", "outage-1")],
            &body,
        )
        .unwrap()
    };
    sb.mock.push(Reply::text("first answer"));
    assert_eq!(chat("before the outage").0, 200);
    // The database goes away while the model answers.
    sb.mock
        .push(Reply::text("lost answer").with_delay(std::time::Duration::from_millis(1500)));
    let during = {
        let port = gw.port;
        std::thread::spawn(move || {
            let (k, v) = auth();
            let body =
                serde_json::json!({"messages": [{"role": "user", "content": "during the outage"}]})
                    .to_string();
            http_try(
                port,
                "POST",
                "/v1/chat/completions",
                &[(k, &v), ("X-Hermes-Session-Id", "outage-1")],
                &body,
            )
            .unwrap()
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(cluster.ctl("stop"));
    let (status, _, body) = during.join().unwrap();
    assert_ne!(
        status, 200,
        "the turn whose answer could not be stored failed: {body}"
    );
    assert!(
        !body.contains("loss-test"),
        "no password in the error: {body}"
    );
    // Back: the same gateway process reconnects, nothing committed was lost.
    assert!(cluster.ctl("start"));
    sb.mock.push(Reply::text("after answer"));
    let (status, _, body) = chat("after the outage");
    assert_eq!(status, 200, "{body}");
    let last = sb.mock.chat_requests().pop().unwrap().to_string();
    assert!(
        last.contains("before the outage") && last.contains("first answer"),
        "the history from before the outage is there: {last}"
    );
}
