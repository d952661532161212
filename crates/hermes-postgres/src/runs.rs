//! `/v1/runs` on the shared database: any replica reads any run's events by
//! sequence number, and a `NOTIFY` at each batch's commit wakes the readers
//! (a wake-up is never replayed: readers catch up from the table). Stop and
//! approval requests reach the replica running the run as signal rows.

use std::time::Duration;

use fallible_iterator::FallibleIterator;
use hermes_state::coordination::Notifier;
use hermes_state::runs::{Remembered, RunStore, StoreError, StoredEvent};
use serde_json::Value;

use crate::error::{Ctx, PgError};
use crate::store::{PgStore, now};
use crate::text::{dec, enc};

fn text(v: &Value) -> String {
    v.to_string()
}

fn parse(t: String) -> Value {
    serde_json::from_str(&dec(t)).unwrap_or(Value::Null)
}

fn run_err(e: PgError) -> StoreError {
    StoreError(e.to_string())
}

impl PgStore {
    /// The `NOTIFY` channel of `topic` for this store's schema.
    fn channel(&self, topic: &str) -> String {
        format!("hermes_{}_{topic}", self.target().schema())
    }
}

impl RunStore for PgStore {
    fn put_status(&self, run_id: &str, status: &Value) -> Result<(), StoreError> {
        let (id, status) = (run_id.to_owned(), text(status));
        self.with(move |c| {
            c.execute(
                "INSERT INTO runs (run_id, status, updated_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (run_id) DO UPDATE SET status = EXCLUDED.status, \
                 updated_at = EXCLUDED.updated_at",
                &[&enc(&id), &enc(&status), &now()],
            )
            .ctx("storing a run's status")
            .map(|_| ())
        })
        .map_err(run_err)
    }

    fn status(&self, run_id: &str) -> Result<Option<Value>, StoreError> {
        let id = run_id.to_owned();
        self.with(move |c| {
            Ok(
                c.query_opt("SELECT status FROM runs WHERE run_id = $1", &[&enc(&id)])
                    .ctx("reading a run's status")?
                    .map(|r| parse(r.get(0))),
            )
        })
        .map_err(run_err)
    }

    fn append(&self, run_id: &str, events: &[StoredEvent]) -> Result<(), StoreError> {
        let id = run_id.to_owned();
        let rows: Vec<(i64, String)> = events
            .iter()
            .map(|e| (i64::try_from(e.seq).unwrap_or(i64::MAX), text(&e.event)))
            .collect();
        let channel = self.channel("runs");
        self.with(move |c| {
            const CTX: &str = "storing a run's events";
            let mut tx = c.transaction().ctx(CTX)?;
            let stmt = tx
                .prepare("INSERT INTO run_events (run_id, seq, event) VALUES ($1, $2, $3)")
                .ctx(CTX)?;
            for (seq, event) in &rows {
                tx.execute(&stmt, &[&enc(&id), seq, &enc(event)]).ctx(CTX)?;
            }
            // Delivered at commit, to every replica listening.
            tx.execute("SELECT pg_notify($1, $2)", &[&channel, &id])
                .ctx(CTX)?;
            tx.commit().ctx(CTX)
        })
        .map_err(run_err)
    }

    fn read_after(
        &self,
        run_id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let id = run_id.to_owned();
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with(move |c| {
            Ok(c.query(
                "SELECT seq, event FROM run_events WHERE run_id = $1 AND seq > $2 \
                 ORDER BY seq LIMIT $3",
                &[&enc(&id), &after, &limit],
            )
            .ctx("reading a run's events")?
            .into_iter()
            .map(|r| StoredEvent {
                seq: u64::try_from(r.get::<_, i64>(0)).unwrap_or(0),
                event: parse(r.get(1)),
            })
            .collect())
        })
        .map_err(run_err)
    }

    fn remember(
        &self,
        scope: &str,
        key: &str,
        answer: &Remembered,
    ) -> Result<Remembered, StoreError> {
        let (scope, key, a) = (scope.to_owned(), key.to_owned(), answer.clone());
        let kept = self.with(move |c| {
            c.execute(
                "INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (scope, key) DO NOTHING",
                &[
                    &enc(&scope),
                    &enc(&key),
                    &a.fingerprint,
                    &i64::from(a.status),
                    &enc(&text(&a.body)),
                    &now(),
                ],
            )
            .ctx("remembering an answer")?;
            recall(c, &scope, &key)
        });
        Ok(kept.map_err(run_err)?.unwrap_or_else(|| answer.clone()))
    }

    fn recall(&self, scope: &str, key: &str) -> Result<Option<Remembered>, StoreError> {
        let (scope, key) = (scope.to_owned(), key.to_owned());
        self.with(move |c| recall(c, &scope, &key)).map_err(run_err)
    }

    fn signal(&self, run_id: &str, signal: &Value) -> Result<(), StoreError> {
        let (id, signal) = (run_id.to_owned(), text(signal));
        let channel = self.channel("run_signals");
        self.with(move |c| {
            const CTX: &str = "signalling a run";
            let mut tx = c.transaction().ctx(CTX)?;
            tx.execute(
                "INSERT INTO run_signals (run_id, signal, created_at) VALUES ($1, $2, $3)",
                &[&enc(&id), &enc(&signal), &now()],
            )
            .ctx(CTX)?;
            tx.execute("SELECT pg_notify($1, $2)", &[&channel, &id])
                .ctx(CTX)?;
            tx.commit().ctx(CTX)
        })
        .map_err(run_err)
    }

    fn take_signals(&self, run_id: &str) -> Result<Vec<Value>, StoreError> {
        let id = run_id.to_owned();
        self.with(move |c| {
            Ok(c.query(
                "DELETE FROM run_signals WHERE run_id = $1 RETURNING id, signal",
                &[&enc(&id)],
            )
            .ctx("taking a run's signals")?
            .into_iter()
            .map(|r| (r.get::<_, i64>(0), parse(r.get(1))))
            .collect::<std::collections::BTreeMap<_, _>>()
            .into_values()
            .collect())
        })
        .map_err(run_err)
    }
}

fn recall(c: &mut postgres::Client, scope: &str, key: &str) -> Result<Option<Remembered>, PgError> {
    Ok(c.query_opt(
        "SELECT fingerprint, status, body FROM idempotency_keys WHERE scope = $1 AND key = $2",
        &[&enc(scope), &enc(key)],
    )
    .ctx("recalling an answer")?
    .map(|r| Remembered {
        fingerprint: r.get(0),
        status: u16::try_from(r.get::<_, i64>(1)).unwrap_or(200),
        body: parse(r.get(2)),
    }))
}

impl Notifier for PgStore {
    fn listen(
        &self,
        topic: &str,
    ) -> Result<std::sync::mpsc::Receiver<String>, hermes_state::store::StoreError> {
        let channel = self.channel(topic);
        let target = self.target().clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name(format!("hermes-pg-listen-{topic}"))
            .spawn(move || listen_loop(&target, &channel, &tx))
            .map_err(|e| hermes_state::store::StoreError(format!("cannot listen: {e}")))?;
        Ok(rx)
    }
}

/// Forwards `channel`'s payloads to `tx` until its receiver is dropped; a
/// lost connection is opened again (an empty payload then says "something
/// may have been missed").
fn listen_loop(target: &crate::Target, channel: &str, tx: &std::sync::mpsc::Sender<String>) {
    loop {
        if let Ok(mut client) = target.connect()
            && client
                .batch_execute(&format!("LISTEN \"{channel}\""))
                .is_ok()
        {
            if tx.send(String::new()).is_err() {
                return;
            }
            loop {
                let mut notes = client.notifications();
                let mut iter = notes.timeout_iter(Duration::from_secs(5));
                match iter.next() {
                    Ok(Some(n)) => {
                        if tx.send(n.payload().to_owned()).is_err() {
                            return;
                        }
                    }
                    // Quiet: still wanted?
                    Ok(None) => {
                        if tx.send(String::new()).is_err() {
                            return;
                        }
                    }
                    Err(_) => break,
                }
            }
        }
        std::thread::sleep(Duration::from_secs(1));
        if tx.send(String::new()).is_err() {
            return;
        }
    }
}
