//! A few worker threads, each owning one connection, that run the store's
//! statements. A caller hands over a closure and waits on a channel, so it
//! may sit on any async runtime (the `postgres` client starts its own and
//! must not be called from inside another). A connection that broke is
//! opened again for the next statement: a database that went away fails
//! what was in flight, and the store works again once it is back.

use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};

use postgres::GenericClient;
use postgres::types::ToSql;

use crate::{PgError, Target};

type Job = Box<dyn FnOnce(&mut Worker) + Send>;

thread_local! {
    /// Statements prepared on this worker's connection, by their text: the
    /// hot ones (every turn's appends, usage, leases) are parsed and planned
    /// once per connection and sent in one round trip afterwards, not two.
    static STATEMENTS: std::cell::RefCell<std::collections::HashMap<String, postgres::Statement>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Statements kept per connection before the cache starts over.
const MAX_STATEMENTS: usize = 128;

/// `sql` prepared on this worker's connection, once (only ever called on a
/// worker thread, whose connection the cache belongs to).
pub(crate) fn prepared(
    c: &mut impl GenericClient,
    sql: &str,
) -> Result<postgres::Statement, postgres::Error> {
    if let Some(st) = STATEMENTS.with(|cache| cache.borrow().get(sql).cloned()) {
        return Ok(st);
    }
    let st = c.prepare(sql)?;
    STATEMENTS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= MAX_STATEMENTS {
            cache.clear();
        }
        cache.insert(sql.to_owned(), st.clone());
    });
    Ok(st)
}

/// `execute` with `sql` prepared once per connection.
pub(crate) fn exec(
    c: &mut impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<u64, postgres::Error> {
    let st = prepared(c, sql)?;
    c.execute(&st, params)
}

/// `query_one` with `sql` prepared once per connection.
pub(crate) fn query_one(
    c: &mut impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<postgres::Row, postgres::Error> {
    let st = prepared(c, sql)?;
    c.query_one(&st, params)
}

/// `query_opt` with `sql` prepared once per connection.
pub(crate) fn query_opt(
    c: &mut impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Option<postgres::Row>, postgres::Error> {
    let st = prepared(c, sql)?;
    c.query_opt(&st, params)
}

/// `query` with `sql` prepared once per connection.
pub(crate) fn query(
    c: &mut impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<postgres::Row>, postgres::Error> {
    let st = prepared(c, sql)?;
    c.query(&st, params)
}

/// The connections of one store.
pub(crate) struct Pool {
    jobs: mpsc::Sender<Job>,
    target: Arc<Target>,
}

/// One worker's connection, opened on demand.
pub(crate) struct Worker {
    client: Option<postgres::Client>,
    target: Arc<Target>,
    last_used: std::time::Instant,
}

/// A connection idle longer than this is checked before use: the server may
/// have restarted meanwhile, and a statement must not be the one to find out.
const CHECK_AFTER_IDLE: std::time::Duration = std::time::Duration::from_secs(1);

impl Worker {
    /// The connection, opened again if it broke.
    fn client(&mut self) -> Result<&mut postgres::Client, PgError> {
        let idle = self.last_used.elapsed() > CHECK_AFTER_IDLE;
        self.last_used = std::time::Instant::now();
        let usable = match self.client.as_mut() {
            Some(c) if c.is_closed() => false,
            Some(c) if idle => c.is_valid(std::time::Duration::from_secs(5)).is_ok(),
            Some(_) => true,
            None => false,
        };
        if !usable {
            self.client = None;
            // Statements prepared on the old connection died with it.
            STATEMENTS.with(|cache| cache.borrow_mut().clear());
            self.client = Some(self.target.connect()?);
        }
        self.client
            .as_mut()
            .ok_or_else(|| PgError::Invalid("no connection".into()))
    }
}

impl Pool {
    /// `size` workers for `target`; one connection is opened now so a wrong
    /// URL or password is an error at start, not at the first turn.
    pub(crate) fn start(target: Target, size: usize) -> Result<Self, PgError> {
        let target = Arc::new(target);
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for n in 0..size.max(1) {
            let rx = Arc::clone(&rx);
            let mut worker = Worker {
                client: None,
                target: Arc::clone(&target),
                last_used: std::time::Instant::now(),
            };
            std::thread::Builder::new()
                .name(format!("hermes-pg-{n}"))
                .spawn(move || {
                    loop {
                        let job = {
                            let rx = rx.lock().unwrap_or_else(PoisonError::into_inner);
                            rx.recv()
                        };
                        let Ok(job) = job else { return };
                        // A job that panics fails its caller (its answer channel
                        // drops), not the worker: the next job gets a fresh connection.
                        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            job(&mut worker)
                        }));
                        if ran.is_err() {
                            worker.client = None;
                            STATEMENTS.with(|cache| cache.borrow_mut().clear());
                        }
                    }
                })
                .map_err(|e| PgError::Invalid(format!("cannot start a database thread: {e}")))?;
        }
        let pool = Self { jobs: tx, target };
        // Connecting happens on a worker: the client starts a runtime of its
        // own, which the caller's thread (maybe inside one) must not.
        pool.run(|_| Ok(()))?;
        Ok(pool)
    }

    /// What this pool connects to.
    pub(crate) fn target(&self) -> &Target {
        &self.target
    }

    /// Runs `f` with a connection on a worker thread and waits for it.
    pub(crate) fn run<T, F>(&self, f: F) -> Result<T, PgError>
    where
        T: Send + 'static,
        F: FnOnce(&mut postgres::Client) -> Result<T, PgError> + Send + 'static,
    {
        self.run_on_worker(move |w| f(w.client()?))
    }

    fn run_on_worker<T, F>(&self, f: F) -> Result<T, PgError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Worker) -> Result<T, PgError> + Send + 'static,
    {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |w| {
            let result = f(w);
            if result.is_err() && w.client.as_ref().is_some_and(postgres::Client::is_closed) {
                w.client = None;
                STATEMENTS.with(|cache| cache.borrow_mut().clear());
            }
            let _ = tx.send(result);
        });
        self.jobs
            .send(job)
            .map_err(|_| PgError::Invalid("the database threads have stopped".into()))?;
        rx.recv()
            .map_err(|_| PgError::Invalid("a database thread stopped mid-statement".into()))?
    }
}
