//! One poller per platform account across replicas: before polling, a
//! gateway takes the account's lease in the shared database; it renews it
//! while it polls, keeps every wait for messages shorter than what is left
//! of it, and writes the platform's position only under its fencing token.
//! A replica that cannot renew stops polling before its lease runs out, so
//! a standby that takes over after the expiry never polls beside it (the
//! "409 Conflict" two Telegram pollers get).

use std::sync::Arc;
use std::time::{Duration, Instant};

use hermes_state::coordination::{Coordinator, Fence};

/// A platform account's lease, as this replica sees it.
pub struct PollLease {
    coordinator: Arc<dyn Coordinator>,
    name: String,
    holder: String,
    ttl: Duration,
}

/// The lease while this replica holds it.
pub struct Held {
    /// The fence for writes made under it.
    pub fence: Fence,
    /// Until when this replica may act on it (its own clock, counted from
    /// before the request that took or renewed it).
    valid_until: Instant,
}

impl PollLease {
    /// The lease `poll:<platform>:<account>` for `holder`.
    pub fn new(
        coordinator: Arc<dyn Coordinator>,
        platform: &str,
        account: &str,
        holder: &str,
        ttl: Duration,
    ) -> Self {
        Self {
            coordinator,
            name: format!("poll:{platform}:{account}"),
            holder: holder.to_owned(),
            ttl,
        }
    }

    /// The longest a single wait for messages may take: a third of the
    /// lease, so a renewal always comes before it runs out.
    pub fn poll_window(&self) -> Duration {
        self.ttl / 3
    }

    /// Takes the lease, or renews it: `Some` while this replica holds it.
    pub fn try_take(&self) -> Result<Option<Held>, String> {
        let asked = Instant::now();
        let lease = self
            .coordinator
            .acquire(&self.name, &self.holder, self.ttl)
            .map_err(|e| e.0)?;
        Ok(lease.map(|l| Held {
            fence: Fence {
                lease: self.name.clone(),
                holder: self.holder.clone(),
                token: l.token,
            },
            valid_until: asked + self.ttl,
        }))
    }

    /// Renews `held` when less than two poll windows of it are left: `false`
    /// when it is lost (another took it, or the database cannot confirm it
    /// in time), and the replica must stop polling.
    pub fn keep(&self, held: &mut Held) -> bool {
        if held.valid_until.saturating_duration_since(Instant::now()) > self.poll_window() * 2 {
            return true;
        }
        match self.try_take() {
            Ok(Some(renewed)) if renewed.fence.token == held.fence.token => {
                held.valid_until = renewed.valid_until;
                true
            }
            Ok(_) => false,
            // The database did not answer: act only on what is surely left.
            Err(_) => {
                held.valid_until.saturating_duration_since(Instant::now()) > self.poll_window()
            }
        }
    }

    /// How long the next wait for messages may take under `held`.
    pub fn budget(&self, held: &Held) -> Duration {
        held.valid_until
            .saturating_duration_since(Instant::now())
            .saturating_sub(self.poll_window())
            .min(self.poll_window())
    }

    /// Gives the lease up (a clean stop): a standby takes over at once.
    pub fn release(&self) {
        let _ = self.coordinator.release(&self.name, &self.holder);
    }

    /// The lease's name (for logs).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How often a standby asks for the lease.
    pub fn standby_interval(&self) -> Duration {
        (self.ttl / 6).max(Duration::from_millis(100))
    }
}
