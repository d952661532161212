//! Which session store a process uses: `sessiondb.provider` in config.yaml
//! (`sqlite`, the default: `$HERMES_HOME/state.db`; or `postgresql`, with
//! `sessiondb.url` or `HERMES_DATABASE_URL`, the variable winning, and
//! `sessiondb.schema`, default `hermes`). A configured PostgreSQL that
//! cannot be reached is an error, never a quiet fall back to state.db.

use std::sync::Arc;

use hermes_postgres::{PgStore, Target};
use hermes_state::coordination::{Coordinator, InboxStore, Notifier};
use hermes_state::documents::{Documents, HomeDocuments};
use hermes_state::responses::{ResponseStore, SqliteResponses};
use hermes_state::runs::RunStore;
use hermes_state::store::SessionAdmin;

use crate::Setup;
use crate::store::{SessionStore, SqliteStore};

/// The store config names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreChoice {
    /// `$HERMES_HOME/state.db`.
    Sqlite,
    /// A PostgreSQL database (URL) and the schema Hermes uses in it.
    Postgres {
        /// `postgresql://…` (holds the password: never print it).
        url: String,
        /// The schema.
        schema: String,
    },
}

/// The store `setup` configures, or why the configuration is unusable.
pub fn choice(setup: &Setup) -> Result<StoreChoice, String> {
    let section = setup.config.get("sessiondb");
    let text = |key: &str| {
        section
            .and_then(|s| s.get(key))
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let provider = text("provider").unwrap_or("sqlite").to_ascii_lowercase();
    match provider.as_str() {
        "sqlite" | "sqlite3" => Ok(StoreChoice::Sqlite),
        "postgresql" | "postgres" | "pg" => {
            let url = setup
                .env
                .get("HERMES_DATABASE_URL")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .or_else(|| text("url"))
                .ok_or_else(|| {
                    "sessiondb.provider is postgresql but no database is named: set \
                     sessiondb.url in config.yaml or HERMES_DATABASE_URL \
                     (postgresql://USER:PASSWORD@HOST:PORT/DATABASE)"
                        .to_owned()
                })?;
            Ok(StoreChoice::Postgres {
                url: url.to_owned(),
                schema: text("schema")
                    .unwrap_or(hermes_postgres::DEFAULT_SCHEMA)
                    .to_owned(),
            })
        }
        other => Err(format!(
            "sessiondb.provider: {other} is not a session store this build has; use sqlite \
             (the default) or postgresql"
        )),
    }
}

/// An opened store.
#[derive(Clone)]
pub struct Opened {
    /// Sessions and their messages.
    pub sessions: Arc<dyn SessionStore>,
    /// Listing, exporting and deleting sessions.
    pub admin: Arc<dyn SessionAdmin>,
    /// What replicas share beyond sessions (`None` on state.db).
    pub shared: Option<Shared>,
}

/// Leases and the gateway inbox of a database several processes share.
#[derive(Clone)]
pub struct Shared {
    /// Who polls which platform account.
    pub coordinator: Arc<dyn Coordinator>,
    /// Received messages and platform cursors.
    pub inbox: Arc<dyn InboxStore>,
    /// `/v1/runs`: status, events, signals, idempotent answers.
    pub runs: Arc<dyn RunStore>,
    /// Wake-ups between replicas.
    pub notifier: Arc<dyn Notifier>,
    /// Past sessions, for `session_search`.
    pub history: Arc<dyn hermes_state::store::HistoryReader + Send + Sync>,
    /// Cron jobs and outputs, pairing files.
    pub documents: Arc<dyn Documents>,
    /// The API server's stored responses.
    pub responses: Arc<dyn ResponseStore>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared")
    }
}

/// Opens the store `setup` configures.
pub fn open(setup: &Setup) -> Result<Opened, String> {
    match choice(setup)? {
        StoreChoice::Sqlite => SqliteStore::open(&setup.home.state_db())
            .map(|s| {
                let s = Arc::new(s);
                Opened {
                    sessions: s.clone(),
                    admin: s,
                    shared: None,
                }
            })
            .map_err(|e| format!("cannot open {}: {}", setup.home.state_db().display(), e.0)),
        StoreChoice::Postgres { url, schema } => {
            let store = Target::parse(&url, &schema)
                .and_then(PgStore::open)
                .map_err(|e| e.to_string())?;
            let store = Arc::new(store);
            Ok(Opened {
                sessions: store.clone(),
                admin: store.clone(),
                shared: Some(Shared {
                    coordinator: store.clone(),
                    inbox: store.clone(),
                    runs: store.clone(),
                    notifier: store.clone(),
                    history: store.clone(),
                    documents: store.clone(),
                    responses: store,
                }),
            })
        }
    }
}

/// Whether a store that cannot be opened must stop the session (a
/// configured database) rather than turn history off (state.db).
pub fn required(setup: &Setup) -> bool {
    !matches!(choice(setup), Ok(StoreChoice::Sqlite))
}

/// The documents (cron jobs and outputs, pairing files) of `setup`'s store:
/// the files under the home on state.db, the database's rows on PostgreSQL
/// (opened here; an unreachable database is an error).
pub fn documents(setup: &Setup) -> Result<Arc<dyn Documents>, String> {
    match choice(setup)? {
        StoreChoice::Sqlite => Ok(Arc::new(HomeDocuments::new(setup.home.root()))),
        StoreChoice::Postgres { .. } => open(setup)?
            .shared
            .map(|s| s.documents)
            .ok_or_else(|| "the configured database keeps no documents".to_owned()),
    }
}

/// The API server's response store on state.db's machine.
pub fn local_responses(setup: &Setup) -> Arc<dyn ResponseStore> {
    Arc::new(SqliteResponses::open(
        &setup.home.root().join("response_store.db"),
    ))
}

/// `gateway.lease_seconds`: how long a replica's lease (a platform's poller,
/// a session's turn) outlives a replica that died holding it; 30 s unless
/// set, at least 1 s.
pub fn lease_ttl(config: &hermes_state::Config) -> std::time::Duration {
    config
        .get("gateway")
        .and_then(|g| g.get("lease_seconds"))
        .and_then(serde_json::Value::as_f64)
        .filter(|s| *s >= 1.0)
        .map_or(
            std::time::Duration::from_secs(30),
            std::time::Duration::from_secs_f64,
        )
}
