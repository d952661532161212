//! One turn at a time per session across replicas: on a shared database a
//! turn first takes the session's lease (`turn:<id>`), renews it while it
//! runs and gives it up at the end; a turn for the same session on another
//! replica waits for it. One process needs none: its conversation task
//! already runs one turn at a time.

use std::sync::Arc;
use std::time::Duration;

use hermes_state::coordination::Coordinator;
use tokio_util::sync::CancellationToken;

/// How often a waiting turn asks again.
const RETRY: Duration = Duration::from_millis(250);
/// How long a turn waits for another replica's turn of the same session.
const PATIENCE: Duration = Duration::from_secs(600);

/// A held turn lease; released (and its renewals stopped) on drop.
pub(crate) struct TurnLease {
    coordinator: Arc<dyn Coordinator>,
    name: String,
    holder: String,
    renewals: CancellationToken,
    /// Whether another replica held it first (its turn may have added to
    /// the history this one knows).
    pub(crate) waited: bool,
}

impl TurnLease {
    /// Takes session `session_id`'s turn lease for `holder` for `ttl`
    /// (renewed every third of it while the turn runs, so a replica that dies
    /// mid-turn holds the session no longer than `ttl`), waiting while
    /// another replica's turn holds it. `Err` when it waited too long.
    pub(crate) async fn take(
        coordinator: Arc<dyn Coordinator>,
        session_id: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Self, String> {
        let name = format!("turn:{session_id}");
        let deadline = tokio::time::Instant::now() + PATIENCE;
        let mut waited = false;
        loop {
            match coordinator.acquire(&name, holder, ttl) {
                Ok(Some(_)) => break,
                Ok(None) if tokio::time::Instant::now() < deadline => {
                    waited = true;
                    tokio::time::sleep(RETRY).await;
                }
                Ok(None) => {
                    return Err(format!(
                        "session {session_id} has been in a turn on another replica for {} \
                         minutes; try again when it ends",
                        PATIENCE.as_secs() / 60
                    ));
                }
                Err(e) => return Err(format!("cannot take the session's turn: {e}")),
            }
        }
        let renewals = CancellationToken::new();
        let (c, n, h, stop) = (
            coordinator.clone(),
            name.clone(),
            holder.to_owned(),
            renewals.clone(),
        );
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(ttl / 3) => {
                        let _ = c.acquire(&n, &h, ttl);
                    }
                }
            }
        });
        Ok(Self {
            coordinator,
            name,
            holder: holder.to_owned(),
            renewals,
            waited,
        })
    }
}

impl Drop for TurnLease {
    fn drop(&mut self) {
        self.renewals.cancel();
        let _ = self.coordinator.release(&self.name, &self.holder);
    }
}

/// This process's name in turn leases (host, pid and a random part).
pub(crate) fn holder() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "host".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{host}:{}:{nanos:08x}", std::process::id())
}
