//! One test body for every session store: state.db (always) and
//! PostgreSQL (when `HERMES_TEST_DATABASE_URL` names a database; CI sets
//! it and `HERMES_TEST_REQUIRE_POSTGRES=1`, so there it cannot be skipped).
//! Search must find the same messages in both for the same corpus.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::sync::Arc;

use hermes_postgres::testing::{Scratch, database_url_or_skip};
use hermes_protocol::{Message, Role, ToolCall};
use hermes_session::store::{SessionStore, SqliteStore};
use hermes_state::session_db::{
    MessageExtra, NewSession, SearchQuery, SearchSort, SessionDb, SessionRouting, UsageDelta,
};
use hermes_state::store::SessionAdmin;

/// A store under test and what keeps it alive.
struct Subject {
    name: &'static str,
    store: Arc<dyn SessionStore>,
    _dir: Option<tempfile::TempDir>,
    pg: Option<Arc<Scratch>>,
    sqlite: Option<Arc<SqliteStore>>,
}

impl Subject {
    /// The same store's admin side (listing, export, usage).
    fn admin(&self) -> &dyn SessionAdmin {
        match (&self.sqlite, &self.pg) {
            (Some(sqlite), _) => sqlite.as_ref(),
            (None, Some(pg)) => &pg.store,
            (None, None) => unreachable!("every subject is one of the two"),
        }
    }
}

fn sqlite() -> Subject {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("state.db")).unwrap());
    Subject {
        name: "sqlite",
        store: store.clone(),
        _dir: Some(dir),
        pg: None,
        sqlite: Some(store),
    }
}

fn postgres() -> Option<Subject> {
    let url = database_url_or_skip()?;
    let scratch = Arc::new(Scratch::new(&url).unwrap());
    Some(Subject {
        name: "postgresql",
        store: Arc::new(PgHandle(Arc::clone(&scratch))),
        _dir: None,
        pg: Some(scratch),
        sqlite: None,
    })
}

/// The scratch store as a trait object that keeps its schema alive.
struct PgHandle(Arc<Scratch>);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(fn $name(&self, $($arg: $ty),*) -> $ret { self.0.store.$name($($arg),*) })*
    };
}

impl SessionStore for PgHandle {
    delegate! {
        create_session(s: &NewSession) -> Result<(), hermes_session::StoreError>;
        reopen_session(id: &str) -> Result<(), hermes_session::StoreError>;
        end_session(id: &str, reason: &str) -> Result<(), hermes_session::StoreError>;
        discard_if_empty(id: &str) -> Result<bool, hermes_session::StoreError>;
        append_message(id: &str, m: &Message, e: &MessageExtra) -> Result<(), hermes_session::StoreError>;
        add_usage(id: &str, u: &UsageDelta) -> Result<(), hermes_session::StoreError>;
        deactivate_last_messages(id: &str, n: usize) -> Result<(), hermes_session::StoreError>;
        session(id: &str) -> Result<Option<hermes_state::session_db::SessionRow>, hermes_session::StoreError>;
        conversation(id: &str) -> Result<Vec<Message>, hermes_session::StoreError>;
        resolve(key: &str) -> Result<Option<String>, hermes_session::StoreError>;
        most_recent(source: Option<&str>) -> Result<Option<String>, hermes_session::StoreError>;
        set_title(id: &str, t: &str) -> Result<(), hermes_session::StoreError>;
        next_title_in_lineage(t: &str) -> Result<String, hermes_session::StoreError>;
        set_routing(id: &str, r: &SessionRouting) -> Result<(), hermes_session::StoreError>;
        copy_routing(a: &str, b: &str) -> Result<(), hermes_session::StoreError>;
        open_session_for_key(k: &str, s: &str) -> Result<Option<String>, hermes_session::StoreError>;
        origin(id: &str) -> Result<Option<String>, hermes_session::StoreError>;
    }
}

fn subjects() -> Vec<Subject> {
    let mut out = vec![sqlite()];
    out.extend(postgres());
    out
}

fn session(id: &str, started_at: f64) -> NewSession {
    NewSession {
        id: id.to_owned(),
        source: "cli".to_owned(),
        model: Some("test/model".to_owned()),
        started_at,
        ..NewSession::default()
    }
}

fn at(ts: f64) -> MessageExtra {
    MessageExtra {
        timestamp: ts,
        ..MessageExtra::default()
    }
}

fn child(id: &str, parent: &str, started_at: f64) -> NewSession {
    NewSession {
        parent_session_id: Some(parent.to_owned()),
        ..session(id, started_at)
    }
}

#[test]
fn sessions_are_created_enriched_ended_reopened_and_discarded() {
    for s in subjects() {
        let db = &s.store;
        db.create_session(&session("a", 100.0)).unwrap();
        // A second create keeps what is set and fills what is missing.
        db.create_session(&NewSession {
            model: Some("other".into()),
            cwd: Some("/w".into()),
            ..session("a", 200.0)
        })
        .unwrap();
        let row = db.session("a").unwrap().unwrap();
        assert_eq!(row.model.as_deref(), Some("test/model"), "{}", s.name);
        assert_eq!(row.cwd.as_deref(), Some("/w"), "{}", s.name);
        assert_eq!(row.started_at, 100.0, "{}", s.name);
        db.end_session("a", "user_exit").unwrap();
        db.end_session("a", "later").unwrap();
        let row = db.session("a").unwrap().unwrap();
        assert_eq!(row.end_reason.as_deref(), Some("user_exit"), "{}", s.name);
        db.reopen_session("a").unwrap();
        assert!(db.session("a").unwrap().unwrap().ended_at.is_none());
        let err = db.create_session(&child("c", "nope", 1.0)).unwrap_err();
        assert!(err.0.contains("nope"), "{}: {err}", s.name);
        // Only sessions nothing was said in are discarded.
        db.create_session(&session("empty", 1.0)).unwrap();
        db.create_session(&session("titled", 1.0)).unwrap();
        db.set_title("titled", "Keep me").unwrap();
        db.append_message("a", &Message::user("hi"), &at(101.0))
            .unwrap();
        assert!(db.discard_if_empty("empty").unwrap(), "{}", s.name);
        assert!(!db.discard_if_empty("titled").unwrap(), "{}", s.name);
        assert!(!db.discard_if_empty("a").unwrap(), "{}", s.name);
        assert!(db.session("empty").unwrap().is_none());
    }
}

fn tool_turn() -> Vec<Message> {
    let mut call = Message::assistant("");
    call.content = None;
    call.reasoning = Some("thinking about files".into());
    call.tool_calls = vec![
        ToolCall::new("call_1", "read_file", "{\"path\": \"a.rs\"}"),
        ToolCall::new("call_2", "terminal", "{\"command\": \"ls\"}"),
    ];
    let result = Message::tool_result("call_1", "read_file", "fn main() {}");
    vec![
        Message::user("read a.rs please"),
        call,
        result,
        Message::tool_result("call_2", "terminal", "a.rs\nb.rs"),
        Message::assistant("done: it has a main"),
    ]
}

#[test]
fn messages_round_trip_count_and_rewind() {
    for s in subjects() {
        let db = &s.store;
        db.create_session(&session("m", 1.0)).unwrap();
        let turn = tool_turn();
        for (i, m) in turn.iter().enumerate() {
            db.append_message("m", m, &at(2.0 + i as f64)).unwrap();
        }
        assert_eq!(db.conversation("m").unwrap(), turn, "{}", s.name);
        let row = db.session("m").unwrap().unwrap();
        assert_eq!(
            (row.message_count, row.tool_call_count),
            (5, 2),
            "{}",
            s.name
        );
        db.deactivate_last_messages("m", 2).unwrap();
        assert_eq!(
            db.conversation("m").unwrap(),
            turn[..3].to_vec(),
            "{}",
            s.name
        );
        // Structured content (the reference's NUL-prefixed JSON) reads back as its text.
        let structured = Message::user("\u{0}json:[{\"type\":\"text\",\"text\":\"look\"}]");
        db.append_message("m", &structured, &at(9.0)).unwrap();
        let last = db.conversation("m").unwrap().pop().unwrap();
        assert_eq!(
            (last.role, last.content.as_deref()),
            (Role::User, Some("look")),
            "{}",
            s.name
        );
        let err = db
            .append_message("ghost", &Message::user("x"), &at(1.0))
            .unwrap_err();
        assert!(err.0.contains("ghost"), "{}: {err}", s.name);
    }
}

#[test]
fn titles_are_unique_numbered_and_move_along_compression() {
    for s in subjects() {
        let db = &s.store;
        db.create_session(&session("t1", 1.0)).unwrap();
        db.create_session(&session("t2", 2.0)).unwrap();
        db.set_title("t1", "  Deploy   notes ").unwrap();
        assert_eq!(
            db.session("t1").unwrap().unwrap().title.as_deref(),
            Some("Deploy notes"),
            "{}",
            s.name
        );
        let taken = db.set_title("t2", "Deploy notes").unwrap_err();
        assert!(taken.0.contains("already in use"), "{}: {taken}", s.name);
        assert_eq!(
            db.next_title_in_lineage("Deploy notes").unwrap(),
            "Deploy notes #2"
        );
        db.set_title("t2", "Deploy notes #2").unwrap();
        assert_eq!(
            db.next_title_in_lineage("Deploy notes #2").unwrap(),
            "Deploy notes #3"
        );
        assert!(!db.set_title_if_empty("t1", "Other").unwrap(), "{}", s.name);
        // A compression continuation takes its ancestor's title.
        db.end_session("t1", "compression").unwrap();
        db.create_session(&child("t1b", "t1", 3.0)).unwrap();
        db.set_title("t1b", "Deploy notes").unwrap();
        assert_eq!(db.session("t1").unwrap().unwrap().title, None, "{}", s.name);
        db.set_title("t2", "   ").unwrap();
        assert_eq!(db.session("t2").unwrap().unwrap().title, None, "{}", s.name);
    }
}

#[test]
fn ids_prefixes_and_titles_resolve_and_the_latest_session_is_found() {
    for s in subjects() {
        let db = &s.store;
        db.create_session(&session("20260101_aaa1", 1.0)).unwrap();
        db.create_session(&session("20260101_aaa2", 2.0)).unwrap();
        db.create_session(&session("20260102_bbb", 3.0)).unwrap();
        assert_eq!(
            db.resolve("20260102").unwrap().as_deref(),
            Some("20260102_bbb")
        );
        assert_eq!(
            db.resolve("20260101_aaa1").unwrap().as_deref(),
            Some("20260101_aaa1")
        );
        let err = db.resolve("20260101_aaa").unwrap_err();
        assert!(err.0.contains("ambiguous"), "{}: {err}", s.name);
        assert_eq!(db.resolve("nothing").unwrap(), None);
        db.set_title("20260101_aaa1", "Plan").unwrap();
        db.set_title("20260101_aaa2", "Plan #2").unwrap();
        assert_eq!(
            db.resolve("Plan").unwrap().as_deref(),
            Some("20260101_aaa2")
        );
        // The newest activity wins; subagent runs never do.
        db.append_message("20260101_aaa1", &Message::user("x"), &at(50.0))
            .unwrap();
        db.create_session(&NewSession {
            model_config: Some(serde_json::json!({"_delegate_from": "20260101_aaa1"})),
            ..child("sub", "20260101_aaa1", 60.0)
        })
        .unwrap();
        db.append_message("sub", &Message::user("y"), &at(70.0))
            .unwrap();
        assert_eq!(
            db.most_recent(Some("cli")).unwrap().as_deref(),
            Some("20260101_aaa1"),
            "{}",
            s.name
        );
        assert_eq!(db.most_recent(Some("telegram")).unwrap(), None);
    }
}

#[test]
fn usage_adds_up_and_routing_finds_a_chat_again() {
    for s in subjects() {
        let db = &s.store;
        db.create_session(&NewSession {
            source: "telegram".into(),
            ..session("g", 1.0)
        })
        .unwrap();
        let delta = UsageDelta {
            model: "test/model".into(),
            billing_provider: "openrouter".into(),
            input_tokens: 100,
            output_tokens: 20,
            cache_read_tokens: 5,
            api_calls: 1,
            estimated_cost_usd: Some(0.25),
            ..UsageDelta::default()
        };
        db.add_usage("g", &delta).unwrap();
        db.add_usage("g", &delta).unwrap();
        let row = db.session("g").unwrap().unwrap();
        assert_eq!(
            (
                row.input_tokens,
                row.output_tokens,
                row.cache_read_tokens,
                row.api_call_count
            ),
            (200, 40, 10, 2),
            "{}",
            s.name
        );
        assert_eq!(row.estimated_cost_usd, Some(0.5), "{}", s.name);
        assert_eq!(row.billing_provider.as_deref(), Some("openrouter"));
        let routing = SessionRouting {
            session_key: "agent:main:telegram:dm:42".into(),
            chat_id: Some("42".into()),
            chat_type: Some("dm".into()),
            user_id: Some("7".into()),
            origin_json: Some("{\"platform\":\"telegram\"}".into()),
            ..SessionRouting::default()
        };
        db.set_routing("g", &routing).unwrap();
        assert_eq!(
            db.open_session_for_key(&routing.session_key, "telegram")
                .unwrap(),
            None
        );
        db.append_message("g", &Message::user("hello"), &at(2.0))
            .unwrap();
        assert_eq!(
            db.open_session_for_key(&routing.session_key, "telegram")
                .unwrap()
                .as_deref(),
            Some("g"),
            "{}",
            s.name
        );
        assert_eq!(db.origin("g").unwrap(), routing.origin_json);
        db.create_session(&NewSession {
            source: "telegram".into(),
            ..child("g2", "g", 3.0)
        })
        .unwrap();
        db.copy_routing("g", "g2").unwrap();
        assert_eq!(db.origin("g2").unwrap(), routing.origin_json, "{}", s.name);
    }
}

#[test]
fn usage_reports_sum_days_and_models_alike() {
    const DAY: f64 = 86_400.0;
    let day0 = 20_000.0 * DAY;
    for s in subjects() {
        let db = &s.store;
        for (id, at, model, tokens, cost) in [
            ("u1", day0 + 100.0, "model/a", 100, 0.5),
            ("u2", day0 + 200.0, "model/b", 300, 1.0),
            ("u3", day0 + DAY + 5.0, "model/a", 50, 0.25),
            ("old", day0 - 10.0, "model/a", 999, 9.0),
        ] {
            db.create_session(&NewSession {
                model: Some(model.into()),
                ..session(id, at)
            })
            .unwrap();
            db.add_usage(
                id,
                &UsageDelta {
                    model: model.into(),
                    input_tokens: tokens,
                    output_tokens: 10,
                    api_calls: 1,
                    estimated_cost_usd: Some(cost),
                    ..UsageDelta::default()
                },
            )
            .unwrap();
        }
        let report = s.admin().usage_report(day0, 2).unwrap();
        let rows: Vec<(String, Option<String>, i64, i64, i64)> = report
            .rows
            .iter()
            .map(|r| {
                (
                    r.day.clone(),
                    r.model.clone(),
                    r.sessions,
                    r.input_tokens,
                    r.output_tokens,
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("2024-10-04".into(), Some("model/a".into()), 1, 100, 10),
                ("2024-10-04".into(), Some("model/b".into()), 1, 300, 10),
                ("2024-10-05".into(), Some("model/a".into()), 1, 50, 10),
            ],
            "{}",
            s.name
        );
        assert!((report.rows[1].cost_usd - 1.0).abs() < 1e-9, "{}", s.name);
        let busiest: Vec<&str> = report.busiest.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(busiest, ["u2", "u1"], "{}", s.name);
    }
}

/// The same conversations written to both stores.
fn corpus(db: &dyn SessionStore) {
    let sessions: &[(&str, &str, &[&str])] = &[
        (
            "s1",
            "cli",
            &[
                "How do I deploy the server to production?",
                "Run the deploy script; the Telegram bot token lives in .env",
                "What about café opening hours and naïve schedulers?",
                "The chat-send endpoint handles P2.2 payloads",
            ],
        ),
        (
            "s2",
            "telegram",
            &[
                "deploying again, the server crashed",
                "Try restarting the worker processes first",
                "東京の天気はどうですか",
                "今日は晴れです",
                "Deployment finished without errors",
            ],
        ),
        (
            "s3",
            "discord",
            &[
                "the quick brown fox",
                "jumps over the lazy dog",
                "brown bread recipe",
            ],
        ),
    ];
    let mut t = 1000.0;
    for (id, source, texts) in sessions {
        db.create_session(&NewSession {
            source: (*source).into(),
            ..session(id, t)
        })
        .unwrap();
        for (i, text) in texts.iter().enumerate() {
            t += 1.0;
            let m = if i % 2 == 0 {
                Message::user(*text)
            } else {
                Message::assistant(*text)
            };
            db.append_message(id, &m, &at(t)).unwrap();
        }
    }
    t += 1.0;
    let mut call = Message::assistant("");
    call.content = None;
    call.tool_calls = vec![ToolCall::new(
        "c9",
        "web_search",
        "{\"query\": \"kubernetes ingress\"}",
    )];
    db.append_message("s3", &call, &at(t)).unwrap();
}

#[test]
fn search_finds_the_same_messages_in_every_store() {
    let Some(pg) = postgres() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let sq = SqliteStore::open(&path).unwrap();
        corpus(&sq);
    }
    corpus(pg.store.as_ref());
    let sqlite_db = SessionDb::open_read_only(&path).unwrap();
    let pg_store = &pg.pg.as_ref().unwrap().store;
    let queries: &[(&str, SearchQuery)] = &[
        ("word", SearchQuery::new("server")),
        ("two words", SearchQuery::new("deploy server")),
        ("phrase", SearchQuery::new("\"quick brown\"")),
        ("prefix", SearchQuery::new("deploy*")),
        ("or", SearchQuery::new("fox OR bread")),
        ("not", SearchQuery::new("brown NOT bread")),
        ("joined term", SearchQuery::new("chat-send")),
        ("dotted", SearchQuery::new("P2.2")),
        ("accents", SearchQuery::new("cafe naive")),
        ("case", SearchQuery::new("TELEGRAM")),
        ("substring fallback", SearchQuery::new("egra")),
        ("cjk trigram", SearchQuery::new("東京の天気")),
        ("cjk short", SearchQuery::new("晴れ")),
        ("tool name", SearchQuery::new("web_search")),
        ("tool arguments", SearchQuery::new("kubernetes")),
        ("nothing", SearchQuery::new("zebra")),
        ("hostile", SearchQuery::new("\"unbalanced (( AND OR * :col")),
        (
            "role filter",
            SearchQuery {
                role_filter: vec!["assistant".into()],
                ..SearchQuery::new("deploy*")
            },
        ),
        (
            "source filter",
            SearchQuery {
                source_filter: vec!["telegram".into()],
                ..SearchQuery::new("deploy*")
            },
        ),
        (
            "session filter",
            SearchQuery {
                session_id: Some("s3".into()),
                ..SearchQuery::new("brown")
            },
        ),
    ];
    for (name, q) in queries {
        let want: BTreeSet<i64> = sqlite_db
            .search(q)
            .unwrap()
            .iter()
            .map(|h| h.message_id)
            .collect();
        let hits = pg_store.search(q).unwrap();
        let got: BTreeSet<i64> = hits.iter().map(|h| h.message_id).collect();
        assert_eq!(got, want, "query {name}: {:?}", q.query);
        for h in &hits {
            assert!(
                h.context.iter().any(|m| m.id == h.message_id),
                "{name}: the hit is in its context"
            );
        }
    }
    // Time orders and pages agree exactly.
    for sort in [SearchSort::Newest, SearchSort::Oldest] {
        for offset in [0, 1, 2] {
            let q = SearchQuery {
                sort,
                limit: 2,
                offset,
                ..SearchQuery::new("deploy* OR brown")
            };
            let want: Vec<i64> = sqlite_db
                .search(&q)
                .unwrap()
                .iter()
                .map(|h| h.message_id)
                .collect();
            let got: Vec<i64> = pg_store
                .search(&q)
                .unwrap()
                .iter()
                .map(|h| h.message_id)
                .collect();
            assert_eq!(got, want, "{sort:?} offset {offset}");
        }
    }
    // Snippets mark the match.
    let hit = &pg_store.search(&SearchQuery::new("crashed")).unwrap()[0];
    assert!(hit.snippet.contains(">>>crashed<<<"), "{}", hit.snippet);
}

#[test]
fn leases_fence_a_stale_holder_out_of_the_inbox() {
    use hermes_state::coordination::{Accepted, Coordinator, Fence, InboxStore};
    use std::time::Duration;
    let Some(pg) = postgres() else { return };
    let store = &pg.pg.as_ref().unwrap().store;
    let ttl = Duration::from_millis(400);
    let a = store.acquire("poll:telegram:x", "a", ttl).unwrap().unwrap();
    assert!(
        store
            .acquire("poll:telegram:x", "b", ttl)
            .unwrap()
            .is_none()
    );
    // Renewing keeps the token.
    assert_eq!(store.acquire("poll:telegram:x", "a", ttl).unwrap(), Some(a));
    let fence_a = Fence {
        lease: "poll:telegram:x".into(),
        holder: "a".into(),
        token: a.token,
    };
    let item = |k: &str| vec![(k.to_owned(), format!("{{\"key\":\"{k}\"}}"))];
    assert_eq!(
        store
            .accept("telegram", &item("1"), Some("2"), Some(&fence_a))
            .unwrap(),
        Accepted::Fresh(vec!["1".into()])
    );
    std::thread::sleep(ttl + Duration::from_millis(100));
    let b = store.acquire("poll:telegram:x", "b", ttl).unwrap().unwrap();
    assert!(b.token > a.token, "a new holder's token is greater");
    // The stalled ex-holder cannot move the position back, nor renew.
    assert_eq!(
        store
            .accept("telegram", &item("0"), Some("1"), Some(&fence_a))
            .unwrap(),
        Accepted::Fenced
    );
    assert!(
        store
            .acquire("poll:telegram:x", "a", ttl)
            .unwrap()
            .is_none()
    );
    assert_eq!(store.cursor("telegram").unwrap().as_deref(), Some("2"));
    assert_eq!(store.pending("telegram").unwrap().len(), 1);
    store.done("telegram", "1").unwrap();
    assert!(store.pending("telegram").unwrap().is_empty());
    // A clean stop hands the lease over at once, with a greater token.
    store.release("poll:telegram:x", "b").unwrap();
    let c = store.acquire("poll:telegram:x", "c", ttl).unwrap().unwrap();
    assert!(c.token > b.token);
}
