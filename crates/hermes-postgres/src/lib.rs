//! The PostgreSQL session store: state.db's tables (schema version 22) in
//! one schema of a shared database, so several Hermes processes on several
//! hosts see the same sessions. Chosen with `sessiondb.provider:
//! postgresql` and `sessiondb.url` (or `HERMES_DATABASE_URL`).
//!
//! Full-text search keeps FTS5's results: a `tsvector` over the same text
//! (words split where FTS5's `unicode61` splits them, accents folded) with a
//! GIN index for words, phrases and prefixes, and `pg_trgm` for substrings
//! and CJK, as the trigram table does.
//!
//! The client is the synchronous `postgres` crate, driven by a few worker
//! threads that own the connections: callers may be on any runtime (the CLI
//! runs a single-threaded one) and block only on a channel.

mod admin;
mod bulk;
mod coordination;
mod copy;
mod documents;
mod error;
mod history;
mod pool;
mod responses;
mod runs;
mod schema;
mod search;
mod store;
mod target;
mod text;

pub use copy::{CopyReport, copy_postgres_to_sqlite, copy_sqlite_to_postgres};
pub use error::PgError;
pub use schema::SCHEMA_VERSION;
pub use store::PgStore;
pub use target::{DEFAULT_SCHEMA, Target, redact_url};

/// A schema of its own for a test, dropped (with everything in it) at the end.
#[doc(hidden)]
pub mod testing {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use crate::{PgError, PgStore, Target};

    /// The database tests use: `HERMES_TEST_DATABASE_URL`, when set.
    pub fn database_url() -> Option<String> {
        std::env::var("HERMES_TEST_DATABASE_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
    }

    /// The test database, or `None` with the skip said on stderr; a test
    /// cannot skip where `HERMES_TEST_REQUIRE_POSTGRES` is set (CI).
    pub fn database_url_or_skip() -> Option<String> {
        let url = database_url();
        if url.is_none() {
            assert!(
                std::env::var_os("HERMES_TEST_REQUIRE_POSTGRES").is_none(),
                "HERMES_TEST_REQUIRE_POSTGRES is set but HERMES_TEST_DATABASE_URL is not"
            );
            eprintln!("PostgreSQL SKIPPED: set HERMES_TEST_DATABASE_URL to a PostgreSQL database");
        }
        url
    }

    /// A store in a fresh schema of the test database.
    pub struct Scratch {
        /// The store.
        pub store: PgStore,
        /// The URL (for a second store on the same schema).
        pub url: String,
        /// The schema.
        pub schema: String,
    }

    impl Scratch {
        /// A fresh schema in the database at `url`.
        pub fn new(url: &str) -> Result<Self, PgError> {
            static N: AtomicUsize = AtomicUsize::new(0);
            let schema = format!(
                "t_{}_{}",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            );
            let store = PgStore::open(Target::parse(url, &schema)?)?;
            Ok(Self {
                store,
                url: url.to_owned(),
                schema,
            })
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let schema = self.schema.clone();
            let _ = self.store.with(move |c| {
                c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    .map_err(|e| PgError::query("dropping a test schema", &e))
            });
        }
    }
}
