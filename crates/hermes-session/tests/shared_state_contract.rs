//! What replicas share beyond sessions, from one test body per store: the
//! home's documents (cron jobs and outputs, pairing files), the API server's
//! stored responses, and managing sessions (list, export, delete). state.db's
//! machine (files, response_store.db, state.db) always; PostgreSQL when
//! `HERMES_TEST_DATABASE_URL` names a database (CI requires it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use hermes_postgres::testing::{Scratch, database_url_or_skip};
use hermes_protocol::Message;
use hermes_session::store::{SessionStore, SqliteStore};
use hermes_state::coordination::{Coordinator, Fence};
use hermes_state::documents::{self, Documents, HomeDocuments, Swap, Swapped, UpdateError};
use hermes_state::responses::{ResponseStore, SqliteResponses};
use hermes_state::session_db::{ListFilter, MessageExtra, NewSession};
use hermes_state::store::SessionAdmin;

fn scratch() -> Option<Arc<Scratch>> {
    let url = database_url_or_skip()?;
    Some(Arc::new(Scratch::new(&url).unwrap()))
}

/// What keeps a store under test alive (its directory or schema).
type Keep = Box<dyn std::any::Any>;

/// Each store's documents, with what keeps them alive.
fn document_stores() -> Vec<(&'static str, Arc<dyn Documents>, Keep)> {
    let dir = tempfile::tempdir().unwrap();
    let mut out: Vec<(&'static str, Arc<dyn Documents>, Keep)> = vec![(
        "files",
        Arc::new(HomeDocuments::new(dir.path())),
        Box::new(dir),
    )];
    if let Some(pg) = scratch() {
        let docs: Arc<dyn Documents> = Arc::new(PgDocs(pg.clone()));
        out.push(("postgresql", docs, Box::new(pg)));
    }
    out
}

/// The scratch store's documents, keeping its schema alive.
struct PgDocs(Arc<Scratch>);

impl Documents for PgDocs {
    fn read(&self, name: &str) -> Result<Option<String>, hermes_state::store::StoreError> {
        self.0.store.read(name)
    }
    fn swap(
        &self,
        changes: &[Swap],
        fence: Option<&Fence>,
    ) -> Result<Swapped, hermes_state::store::StoreError> {
        self.0.store.swap(changes, fence)
    }
    fn list(&self, folder: &str) -> Result<Vec<String>, hermes_state::store::StoreError> {
        self.0.store.list(folder)
    }
    fn remove_folder(&self, folder: &str) -> Result<(), hermes_state::store::StoreError> {
        self.0.store.remove_folder(folder)
    }
    fn describe(&self, name: &str) -> String {
        self.0.store.describe(name)
    }
}

#[test]
fn documents_swap_only_over_what_was_read_and_list_by_folder() {
    for (name, docs, _keep) in document_stores() {
        let docs = docs.as_ref();
        assert_eq!(docs.read("cron/jobs.json").unwrap(), None, "{name}");
        documents::update(docs, &["cron/jobs.json"], None, |d| {
            d[0] = Some("{\"jobs\": []}\n\0nul kept".into());
        })
        .unwrap();
        assert_eq!(
            docs.read("cron/jobs.json").unwrap().as_deref(),
            Some("{\"jobs\": []}\n\0nul kept"),
            "{name}"
        );
        // A swap made from a stale read writes nothing, not even its other document.
        let stale = [
            Swap {
                name: "cron/jobs.json".into(),
                before: None,
                after: Some("lost".into()),
            },
            Swap {
                name: "platforms/pairing/x.json".into(),
                before: None,
                after: Some("{}".into()),
            },
        ];
        assert_eq!(docs.swap(&stale, None).unwrap(), Swapped::Changed, "{name}");
        assert_eq!(
            docs.read("platforms/pairing/x.json").unwrap(),
            None,
            "{name}"
        );
        for n in [
            "cron/output/ab/2.md",
            "cron/output/ab/1.md",
            "cron/output/a_/1.md",
        ] {
            documents::update(docs, &[n], None, |d| d[0] = Some(n.into())).unwrap();
        }
        assert_eq!(
            docs.list("cron/output/ab").unwrap(),
            ["cron/output/ab/1.md", "cron/output/ab/2.md"],
            "{name}: only that folder, in name order"
        );
        assert_eq!(docs.list("cron").unwrap().len(), 4, "{name}: at any depth");
        docs.remove_folder("cron/output/ab").unwrap();
        assert_eq!(
            docs.list("cron/output").unwrap(),
            ["cron/output/a_/1.md"],
            "{name}"
        );
        // A removal is a swap to nothing.
        documents::update(docs, &["cron/output/a_/1.md"], None, |d| d[0] = None).unwrap();
        assert!(docs.list("cron/output").unwrap().is_empty(), "{name}");
    }
}

#[test]
fn concurrent_edits_through_separate_handles_are_all_kept() {
    for (name, docs, _keep) in document_stores() {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let docs = docs.clone();
                std::thread::spawn(move || {
                    for _ in 0..10 {
                        documents::update(docs.as_ref(), &["n"], None, |d| {
                            let n: u32 = d[0].as_deref().map_or(0, |t| t.parse().unwrap());
                            d[0] = Some((n + 1).to_string());
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(docs.read("n").unwrap().as_deref(), Some("40"), "{name}");
    }
}

#[test]
fn a_write_under_a_lost_lease_is_refused() {
    let Some(pg) = scratch() else { return };
    let store = &pg.store;
    // Long enough that the first write lands inside it on a loaded machine
    // (300 ms was not, once in CI).
    let ttl = std::time::Duration::from_secs(2);
    let a = store.acquire("cron:scheduler", "a", ttl).unwrap().unwrap();
    let fence = Fence {
        lease: "cron:scheduler".into(),
        holder: "a".into(),
        token: a.token,
    };
    documents::update(store, &["cron/jobs.json"], Some(&fence), |d| {
        d[0] = Some("1".into());
    })
    .unwrap();
    std::thread::sleep(ttl + std::time::Duration::from_millis(100));
    store.acquire("cron:scheduler", "b", ttl).unwrap().unwrap();
    let late = documents::update(store, &["cron/jobs.json"], Some(&fence), |d| {
        d[0] = Some("2".into());
    });
    assert_eq!(late, Err(UpdateError::Fenced));
    assert_eq!(store.read("cron/jobs.json").unwrap().as_deref(), Some("1"));
}

#[test]
fn stored_responses_keep_the_most_recently_used() {
    let dir = tempfile::tempdir().unwrap();
    let mut stores: Vec<(&str, Arc<dyn ResponseStore>, Keep)> = vec![(
        "sqlite",
        Arc::new(SqliteResponses::open(&dir.path().join("response_store.db"))),
        Box::new(()),
    )];
    if let Some(pg) = scratch() {
        stores.push((
            "postgresql",
            Arc::new(PgResponses(pg.clone())),
            Box::new(pg),
        ));
    }
    for (name, store, _keep) in stores {
        store.put("resp_a", "{\"a\":1}", Some("chat"), 2).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        store.put("resp_b", "{\"b\":\0}", None, 2).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(
            store.get("resp_a").unwrap().as_deref(),
            Some("{\"a\":1}"),
            "{name}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
        store.put("resp_c", "{}", Some("other"), 2).unwrap();
        assert_eq!(
            store.get("resp_b").unwrap(),
            None,
            "{name}: least recently used went"
        );
        assert_eq!(
            store.conversation("chat").unwrap().as_deref(),
            Some("resp_a"),
            "{name}"
        );
        assert!(store.delete("resp_a").unwrap(), "{name}");
        assert_eq!(store.conversation("chat").unwrap(), None, "{name}");
        assert!(!store.delete("resp_a").unwrap(), "{name}");
        assert_eq!(
            store.conversation("other").unwrap().as_deref(),
            Some("resp_c"),
            "{name}"
        );
    }
}

struct PgResponses(Arc<Scratch>);

impl ResponseStore for PgResponses {
    fn put(
        &self,
        id: &str,
        data: &str,
        conversation: Option<&str>,
        keep: usize,
    ) -> Result<(), hermes_state::store::StoreError> {
        self.0.store.put(id, data, conversation, keep)
    }
    fn get(&self, id: &str) -> Result<Option<String>, hermes_state::store::StoreError> {
        ResponseStore::get(&self.0.store, id)
    }
    fn delete(&self, id: &str) -> Result<bool, hermes_state::store::StoreError> {
        ResponseStore::delete(&self.0.store, id)
    }
    fn conversation(&self, name: &str) -> Result<Option<String>, hermes_state::store::StoreError> {
        ResponseStore::conversation(&self.0.store, name)
    }
}

fn new_session(id: &str, started_at: f64) -> NewSession {
    NewSession {
        id: id.to_owned(),
        source: "cli".to_owned(),
        model: Some("test/model".to_owned()),
        started_at,
        ..NewSession::default()
    }
}

/// A root, a compressed conversation (root → continuation), a subagent run
/// under the root, and a branch: as the runtime writes them.
fn family(store: &dyn SessionStore) {
    let say = |id: &str, text: &str, ts: f64| {
        let extra = MessageExtra {
            timestamp: ts,
            ..MessageExtra::default()
        };
        store
            .append_message(id, &Message::user(text), &extra)
            .unwrap();
    };
    store.create_session(&new_session("root", 100.0)).unwrap();
    say(
        "root",
        "first line\nof the root question that is rather long, long enough to cut",
        101.0,
    );
    store
        .create_session(&NewSession {
            model_config: Some(serde_json::json!({"_delegate_from": "root"})),
            parent_session_id: Some("root".into()),
            ..new_session("run", 102.0)
        })
        .unwrap();
    say("run", "subagent work", 103.0);
    store.create_session(&new_session("long", 200.0)).unwrap();
    say("long", "before compression", 201.0);
    store.end_session("long", "compression").unwrap();
    store
        .create_session(&NewSession {
            parent_session_id: Some("long".into()),
            ..new_session("long-2", 210.0)
        })
        .unwrap();
    say("long-2", "after compression", 211.0);
    store.set_title("long-2", "The long one").unwrap();
    store.end_session("root", "branched").unwrap();
    store
        .create_session(&NewSession {
            model_config: Some(serde_json::json!({"_branched_from": "root"})),
            parent_session_id: Some("root".into()),
            ..new_session("branch", 300.0)
        })
        .unwrap();
}

/// A store under test: its name, its runtime and management sides, its keeper.
type AdminSubject = (
    &'static str,
    Arc<dyn SessionStore>,
    Arc<dyn SessionAdmin>,
    Keep,
);

fn admins() -> Vec<AdminSubject> {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Arc::new(SqliteStore::open(&dir.path().join("state.db")).unwrap());
    let mut out: Vec<AdminSubject> = vec![("sqlite", sqlite.clone(), sqlite, Box::new(dir))];
    if let Some(pg) = scratch() {
        let store = Arc::new(
            hermes_postgres::PgStore::open(
                hermes_postgres::Target::parse(&pg.url, &pg.schema).unwrap(),
            )
            .unwrap(),
        );
        out.push(("postgresql", store.clone(), store, Box::new(pg)));
    }
    out
}

#[test]
fn listing_exporting_and_deleting_agree_between_stores() {
    let mut listings = Vec::new();
    let mut exports = Vec::new();
    for (name, store, admin, _keep) in admins() {
        family(store.as_ref());
        let listed = admin.list_sessions(&ListFilter::default()).unwrap();
        let ids: Vec<&str> = listed.iter().map(|s| s.id.as_str()).collect();
        // Newest start first; the subagent run and the continuation are
        // hidden, the compressed conversation shows as its tip.
        assert_eq!(ids, ["branch", "long-2", "root"], "{name}");
        let long = &listed[1];
        assert_eq!(long.started_at, 200.0, "{name}: the root's start time");
        assert_eq!(long.title.as_deref(), Some("The long one"), "{name}");
        assert_eq!(long.preview, "after compression", "{name}");
        assert_eq!(
            listed[2].preview, "first line of the root question that is rather long, long en...",
            "{name}"
        );
        let all = admin
            .list_sessions(&ListFilter {
                include_children: true,
                limit: 2,
                offset: 1,
                ..ListFilter::default()
            })
            .unwrap();
        let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["long-2", "long"], "{name}: a page of every row");
        listings.push(listed);
        let export = admin.export_session("long-2").unwrap().unwrap();
        assert_eq!(
            export["messages"][0]["content"], "after compression",
            "{name}"
        );
        assert!(export["messages"][0].get("fts").is_none(), "{name}");
        assert!(admin.export_session("nope").unwrap().is_none(), "{name}");
        exports.push(export);
        // Deleting the root takes its subagent run; the branch stays, detached.
        assert!(admin.delete_session("root").unwrap(), "{name}");
        assert!(!admin.delete_session("root").unwrap(), "{name}");
        assert!(store.session("run").unwrap().is_none(), "{name}");
        let branch = store.session("branch").unwrap().unwrap();
        assert_eq!(branch.parent_session_id, None, "{name}");
        assert!(admin.messages("run").unwrap().is_empty(), "{name}");
    }
    if let [a, b] = listings.as_slice() {
        // End times are the wall clock's; everything else must match.
        let mut a = a.clone();
        let mut b = b.clone();
        for row in a.iter_mut().chain(b.iter_mut()) {
            row.ended_at = row.ended_at.map(|_| 0.0);
        }
        assert_eq!(a, b, "both stores list the same rows");
    }
    if let [a, b] = exports.as_slice() {
        let keys = |v: &serde_json::Value| {
            v.as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect::<Vec<String>>()
        };
        assert_eq!(keys(a), keys(b), "the same session columns");
        assert_eq!(
            keys(&a["messages"][0]),
            keys(&b["messages"][0]),
            "the same message columns"
        );
        let mut a = a.clone();
        let mut b = b.clone();
        a["ended_at"] = serde_json::Value::Null;
        b["ended_at"] = serde_json::Value::Null;
        assert_eq!(a, b, "the same export, value for value");
    }
}

#[test]
fn bulk_prune_and_archive_select_the_same_sessions_in_every_store() {
    use hermes_state::session_db::SessionFilter;
    let mut picked = Vec::new();
    for (name, store, admin, _keep) in admins() {
        family(store.as_ref());
        store
            .create_session(&NewSession {
                cwd: Some("/work/Project_1/sub".into()),
                ..new_session("other", 400.0)
            })
            .unwrap();
        store.set_title("other", "Planning 100% done").unwrap();
        store.end_session("other", "user_exit").unwrap();
        // Titles match case-insensitively; `%` in the text is a wildcard,
        // as SQLite's LIKE has no escape; only ended sessions are touched.
        let by_title = SessionFilter {
            title_like: Some("PLANNING 1%".into()),
            ..SessionFilter::default()
        };
        let ids = |f: &SessionFilter| -> Vec<String> {
            admin
                .bulk_candidates(f)
                .unwrap()
                .into_iter()
                .map(|c| c.id)
                .collect()
        };
        assert_eq!(ids(&by_title), ["other"], "{name}");
        let by_cwd = SessionFilter {
            cwd_prefix: Some("/work/project_1/".into()),
            ..SessionFilter::default()
        };
        assert_eq!(
            ids(&by_cwd),
            ["other"],
            "{name}: the path's case is ignored"
        );
        let old = SessionFilter {
            started_before: Some(250.0),
            ..SessionFilter::default()
        };
        // "root" and "long" ended; "run" and "long-2" did not.
        assert_eq!(ids(&old), ["root", "long"], "{name}");
        picked.push(ids(&old));
        // Archiving "long" hides its continuation too (one conversation).
        let long = SessionFilter {
            end_reason: Some("compression".into()),
            ..SessionFilter::default()
        };
        assert_eq!(admin.archive_matching(&long).unwrap(), 1, "{name}");
        let listed: Vec<String> = admin
            .list_sessions(&ListFilter::default())
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(listed, ["other", "branch", "root"], "{name}");
        assert_eq!(admin.prune_matching(&by_title).unwrap(), 1, "{name}");
        assert!(store.session("other").unwrap().is_none(), "{name}");
        assert!(store.session("root").unwrap().is_some(), "{name}");
    }
    if let [a, b] = picked.as_slice() {
        assert_eq!(a, b);
    }
}
