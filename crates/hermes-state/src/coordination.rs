//! What several Hermes processes on one database must agree on: who polls a
//! platform account (a lease with a fencing token) and the gateway's inbox
//! and cursors, written only under the lease. A single gateway on state.db
//! needs none of it (the pid file keeps it alone); PostgreSQL implements
//! both for replicas.

use std::time::Duration;

use crate::store::StoreError;

/// A lease held, with its fencing token: a later holder's token is always
/// greater, so a write fenced with a stale token is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// The fencing token.
    pub token: i64,
}

/// Leases over a shared database.
pub trait Coordinator: Send + Sync {
    /// Takes the lease `name` for `holder` for `ttl` (or renews it when
    /// `holder` has it): its token, or `None` while another holds it.
    fn acquire(&self, name: &str, holder: &str, ttl: Duration)
    -> Result<Option<Lease>, StoreError>;
    /// Gives the lease up now (a clean stop), so a standby takes over at once.
    fn release(&self, name: &str, holder: &str) -> Result<(), StoreError>;
}

/// The lease a write must still be under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// The lease.
    pub lease: String,
    /// Who must hold it.
    pub holder: String,
    /// With this token.
    pub token: i64,
}

/// What [`InboxStore::accept`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accepted {
    /// Stored; the keys not seen before.
    Fresh(Vec<String>),
    /// Nothing stored: the fence's lease is no longer held with its token.
    Fenced,
}

/// The gateway's durable inbox: messages (by key, as JSON) written with the
/// platform's new position before they are handled, marked done once
/// answered; what a crashed holder left is picked up by the next.
pub trait InboxStore: Send + Sync {
    /// The saved position of `platform`.
    fn cursor(&self, platform: &str) -> Result<Option<String>, StoreError>;
    /// Stores `items` (key, payload) and the new `cursor` in one transaction,
    /// only while `fence` holds (when given).
    fn accept(
        &self,
        platform: &str,
        items: &[(String, String)],
        cursor: Option<&str>,
        fence: Option<&Fence>,
    ) -> Result<Accepted, StoreError>;
    /// Payloads accepted but never marked done, oldest first.
    fn pending(&self, platform: &str) -> Result<Vec<String>, StoreError>;
    /// Marks one message handled.
    fn done(&self, platform: &str, key: &str) -> Result<(), StoreError>;
}

/// Wake-ups between processes (PostgreSQL's `LISTEN`/`NOTIFY`). A wake-up
/// says only that something changed; it is never replayed, so a listener
/// catches up by reading the store (by sequence number), and also reads it
/// now and then in case a wake-up was missed.
pub trait Notifier: Send + Sync {
    /// Payloads sent on `topic` (`runs`: a run id whose events grew;
    /// `run_signals`: a run id that was sent a signal) from now on.
    fn listen(&self, topic: &str) -> Result<std::sync::mpsc::Receiver<String>, StoreError>;
}
