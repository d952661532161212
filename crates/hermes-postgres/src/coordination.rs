//! Leases with fencing tokens and the gateway's inbox, for replicas on one
//! database. Lease times are the server's clock (`now()`), so hosts whose
//! clocks disagree still agree on who holds what.

use std::time::Duration;

use hermes_state::coordination::{Accepted, Coordinator, Fence, InboxStore, Lease};
use hermes_state::store::StoreError;

use crate::error::{Ctx, PgError};
use crate::store::{PgStore, now};
use crate::text::{dec, enc};

/// Answered messages are forgotten after this many seconds.
const KEEP_DONE_SECS: f64 = 7.0 * 86_400.0;

fn own(s: &str) -> String {
    s.to_owned()
}

impl Coordinator for PgStore {
    fn acquire(
        &self,
        name: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, StoreError> {
        let (name, holder) = (own(name), own(holder));
        let secs = ttl.as_secs_f64();
        Ok(self.with(move |c| {
            // One statement: a free or expired lease is taken (the token goes
            // up), the holder's own is renewed (the token stays).
            Ok(crate::pool::query_opt(
                c,
                "INSERT INTO leases (name, holder, token, expires_at) \
                 VALUES ($1, $2, 1, now() + make_interval(secs => $3)) \
                 ON CONFLICT (name) DO UPDATE SET \
                 token = CASE WHEN leases.holder = EXCLUDED.holder THEN leases.token \
                         ELSE leases.token + 1 END, \
                 holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at \
                 WHERE leases.holder = EXCLUDED.holder OR leases.expires_at < now() \
                 RETURNING token",
                &[&name, &holder, &secs],
            )
            .ctx("taking a lease")?
            .map(|r| Lease { token: r.get(0) }))
        })?)
    }

    fn release(&self, name: &str, holder: &str) -> Result<(), StoreError> {
        let (name, holder) = (own(name), own(holder));
        Ok(self.with(move |c| {
            // Expired, not deleted: the next holder's token must still go up.
            crate::pool::exec(
                c,
                "UPDATE leases SET expires_at = now() - interval '1 second' \
                 WHERE name = $1 AND holder = $2",
                &[&name, &holder],
            )
            .ctx("releasing a lease")
            .map(|_| ())
        })?)
    }
}

/// Whether `fence`'s lease is still held with its token; `FOR SHARE`, so no
/// other replica takes it before the transaction commits.
pub(crate) fn fence_held(
    tx: &mut postgres::Transaction<'_>,
    fence: &Fence,
) -> Result<bool, postgres::Error> {
    Ok(tx
        .query_opt(
            "SELECT 1 FROM leases WHERE name = $1 AND holder = $2 AND token = $3 \
             AND expires_at > now() FOR SHARE",
            &[&fence.lease, &fence.holder, &fence.token],
        )?
        .is_some())
}

impl InboxStore for PgStore {
    fn cursor(&self, platform: &str) -> Result<Option<String>, StoreError> {
        let platform = own(platform);
        Ok(self.with(move |c| {
            Ok(c.query_opt(
                "SELECT value FROM gateway_cursors WHERE platform = $1",
                &[&platform],
            )
            .ctx("reading a platform's position")?
            .map(|r| dec(r.get(0))))
        })?)
    }

    fn accept(
        &self,
        platform: &str,
        items: &[(String, String)],
        cursor: Option<&str>,
        fence: Option<&Fence>,
    ) -> Result<Accepted, StoreError> {
        let platform = own(platform);
        let items = items.to_vec();
        let cursor = cursor.map(own);
        let fence = fence.cloned();
        Ok(self.with(move |c| {
            const CTX: &str = "storing received messages";
            let mut tx = c.transaction().ctx(CTX)?;
            if let Some(f) = &fence
                && !fence_held(&mut tx, f).ctx(CTX)?
            {
                return Ok(Accepted::Fenced);
            }
            let at = now();
            let mut fresh = Vec::new();
            for (key, payload) in &items {
                let added = tx
                    .execute(
                        "INSERT INTO gateway_inbox (platform, key, payload, received_at) \
                         VALUES ($1, $2, $3, $4) ON CONFLICT (platform, key) DO NOTHING",
                        &[&platform, &enc(key), &enc(payload), &at],
                    )
                    .ctx(CTX)?;
                if added > 0 {
                    fresh.push(key.clone());
                }
            }
            if let Some(cursor) = &cursor {
                tx.execute(
                    "INSERT INTO gateway_cursors (platform, value) VALUES ($1, $2) \
                     ON CONFLICT (platform) DO UPDATE SET value = EXCLUDED.value",
                    &[&platform, &enc(cursor)],
                )
                .ctx(CTX)?;
            }
            tx.execute(
                "DELETE FROM gateway_inbox WHERE platform = $1 AND done_at IS NOT NULL \
                 AND done_at < $2",
                &[&platform, &(at - KEEP_DONE_SECS)],
            )
            .ctx(CTX)?;
            tx.commit().ctx(CTX)?;
            Ok::<_, PgError>(Accepted::Fresh(fresh))
        })?)
    }

    fn pending(&self, platform: &str) -> Result<Vec<String>, StoreError> {
        let platform = own(platform);
        Ok(self.with(move |c| {
            Ok(c.query(
                "SELECT payload FROM gateway_inbox WHERE platform = $1 AND done_at IS NULL \
                 ORDER BY seq",
                &[&platform],
            )
            .ctx("reading unanswered messages")?
            .iter()
            .map(|r| dec(r.get(0)))
            .collect())
        })?)
    }

    fn done(&self, platform: &str, key: &str) -> Result<(), StoreError> {
        let (platform, key) = (own(platform), own(key));
        Ok(self.with(move |c| {
            c.execute(
                "UPDATE gateway_inbox SET done_at = $3 WHERE platform = $1 AND key = $2",
                &[&platform, &enc(&key), &now()],
            )
            .ctx("marking a message answered")
            .map(|_| ())
        })?)
    }
}
