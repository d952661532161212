//! [`CredentialPool`]: selection, exhaustion and usage accounting for one
//! provider's pooled credentials.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;

use super::entry::{
    Credential, FailureDetail, Status, patch_cleared, patch_exhausted, patch_request_count,
};
use super::store::{
    AuthStore, credentials_in, find_entry_mut, fresh_id, normalize_provider, sorted_indices,
    with_slice,
};
use super::timefmt::to_epoch;
use super::{Clock, PoolError, RandomSource, SplitMix64, Strategy};

/// One provider's credentials, loaded from `auth.json`. Every mutation is a
/// locked re-read/patch/write of the file, after which the in-memory view
/// is refreshed from what was written (so it also picks up other processes'
/// changes).
#[derive(Debug)]
pub struct CredentialPool {
    store: AuthStore,
    provider: String,
    strategy: Strategy,
    entries: Vec<Credential>,
    current_id: Option<String>,
}

impl CredentialPool {
    /// Load `provider`'s pool from `path`. The `random` strategy and new ids
    /// use a generator seeded from `clock`; see [`Self::load_with_random`].
    pub fn load(
        path: impl Into<PathBuf>,
        provider: &str,
        strategy: Strategy,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, PoolError> {
        let seed = to_epoch(clock.now()).to_bits() ^ (u64::from(std::process::id()) << 32);
        Self::load_with_random(
            path,
            provider,
            strategy,
            clock,
            Box::new(SplitMix64::new(seed)),
        )
    }

    /// [`Self::load`] with an explicit random source.
    pub fn load_with_random(
        path: impl Into<PathBuf>,
        provider: &str,
        strategy: Strategy,
        clock: Arc<dyn Clock>,
        rng: Box<dyn RandomSource>,
    ) -> Result<Self, PoolError> {
        let mut pool = Self {
            store: AuthStore::new(path, clock, rng),
            provider: normalize_provider(provider),
            strategy,
            entries: Vec::new(),
            current_id: None,
        };
        pool.reload()?;
        if pool.entries.iter().any(|c| c.id.is_empty()) {
            pool.assign_missing_ids()?;
        }
        Ok(pool)
    }

    /// Re-read the provider's entries from disk.
    pub fn reload(&mut self) -> Result<(), PoolError> {
        self.entries = self.store.list(&self.provider)?;
        Ok(())
    }

    /// The pool key.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The selection strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The underlying store.
    pub fn store(&self) -> &AuthStore {
        &self.store
    }

    /// All entries, by priority.
    pub fn entries(&self) -> &[Credential] {
        &self.entries
    }

    /// Whether the pool has any entries.
    pub fn has_credentials(&self) -> bool {
        !self.entries.is_empty()
    }

    /// Whether any entry is usable now.
    pub fn has_available(&self) -> bool {
        let now = self.store.clock().now();
        self.entries.iter().any(|c| c.is_available_at(now))
    }

    /// The entry last returned by [`Self::select`], if still present.
    pub fn current(&self) -> Option<&Credential> {
        let id = self.current_id.as_deref()?;
        self.entries.iter().find(|c| c.id == id)
    }

    /// The current entry, else the first available one; changes nothing.
    pub fn peek(&self) -> Option<&Credential> {
        let now = self.store.clock().now();
        self.current()
            .or_else(|| self.entries.iter().find(|c| c.is_available_at(now)))
    }

    /// Pick a credential by the strategy, skipping dead entries and those
    /// still cooling down. Entries whose cooldown has passed are reset to
    /// `ok` on disk; `round_robin` persists the new order.
    pub fn select(&mut self) -> Result<Option<Credential>, PoolError> {
        let now = self.store.clock().now();
        if self.entries.iter().any(|c| c.cooldown_elapsed(now)) {
            let provider = self.provider.clone();
            self.mutate(move |slice, now| {
                let mut changed = false;
                for obj in slice.iter_mut().filter_map(Value::as_object_mut) {
                    let elapsed = Credential::from_map(&provider, obj).cooldown_elapsed(now);
                    if elapsed {
                        patch_cleared(obj, Some(Status::Ok));
                        changed = true;
                    }
                }
                changed
            })?;
        }
        let now = self.store.clock().now();
        let available: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].is_available_at(now))
            .collect();
        let Some(&first) = available.first() else {
            self.current_id = None;
            return Ok(None);
        };
        let chosen = match self.strategy {
            Strategy::Random => {
                let len = available.len() as u64;
                let pick = (self.store.rng().next_u64() % len) as usize;
                available.get(pick).copied().unwrap_or(first)
            }
            Strategy::LeastUsed if available.len() > 1 => {
                let pick = available
                    .iter()
                    .copied()
                    .min_by_key(|&i| self.entries[i].request_count)
                    .unwrap_or(first);
                // Provisional in-memory bump, as the reference does, so that
                // back-to-back selections spread out; `record_use` persists.
                self.entries[pick].request_count += 1;
                pick
            }
            Strategy::RoundRobin if available.len() > 1 => {
                let id = self.entries[first].id.clone();
                self.move_to_back(&id)?;
                self.current_id = Some(id.clone());
                return Ok(self.current().cloned());
            }
            _ => first,
        };
        let entry = self.entries[chosen].clone();
        self.current_id = Some(entry.id.clone());
        Ok(Some(entry))
    }

    /// Put the entry `id` into cooldown after an HTTP `status` failure: 5
    /// minutes for 401, an hour for 429/402/others, or until `reset_at` when
    /// the provider said when the limit resets. Returns whether `id` exists.
    pub fn mark_exhausted(
        &mut self,
        id: &str,
        status: u16,
        reset_at: Option<SystemTime>,
    ) -> Result<bool, PoolError> {
        let detail = FailureDetail {
            reset_at,
            ..FailureDetail::default()
        };
        self.mark_failed(id, status, &detail)
    }

    /// [`Self::mark_exhausted`] recording the provider's reason and message
    /// too. A 401 whose reason is one of
    /// [`TERMINAL_AUTH_REASONS`](super::TERMINAL_AUTH_REASONS) marks the
    /// entry `dead`: it is never selected again until reset or re-added.
    pub fn mark_failed(
        &mut self,
        id: &str,
        status: u16,
        detail: &FailureDetail<'_>,
    ) -> Result<bool, PoolError> {
        let new_status = detail.status_for(status);
        let found = self.mutate(|slice, now| match find_entry_mut(slice, id) {
            Some(obj) => {
                patch_exhausted(obj, new_status, now, status, detail);
                true
            }
            None => false,
        })?;
        if self.current_id.as_deref() == Some(id) {
            self.current_id = None;
        }
        Ok(found)
    }

    /// Mark `current_id` exhausted and select the next credential.
    pub fn rotate(
        &mut self,
        current_id: &str,
        status: u16,
        reset_at: Option<SystemTime>,
    ) -> Result<Option<Credential>, PoolError> {
        self.mark_exhausted(current_id, status, reset_at)?;
        self.current_id = None;
        self.select()
    }

    /// Add one to the stored `request_count` of `id`. Returns whether `id`
    /// exists.
    pub fn record_use(&mut self, id: &str) -> Result<bool, PoolError> {
        self.mutate(|slice, _| match find_entry_mut(slice, id) {
            Some(obj) => {
                patch_request_count(obj);
                true
            }
            None => false,
        })
    }

    /// Clear every entry's status and error fields; returns how many changed.
    pub fn reset_statuses(&mut self) -> Result<usize, PoolError> {
        let provider = self.provider.clone();
        let mut count = 0;
        self.mutate(|slice, _| {
            for obj in slice.iter_mut().filter_map(Value::as_object_mut) {
                let flagged = {
                    let c = Credential::from_map(&provider, obj);
                    c.last_status.is_some()
                        || c.last_status_at.is_some()
                        || c.last_error_code.is_some()
                };
                if flagged {
                    patch_cleared(obj, None);
                    count += 1;
                }
            }
            count > 0
        })?;
        Ok(count)
    }

    /// Add a manual API key to this pool (see [`AuthStore::add`]).
    pub fn add(&mut self, key: &str, label: Option<&str>) -> Result<Credential, PoolError> {
        let provider = self.provider.clone();
        let added = self.store.add(&provider, key, label)?;
        self.reload()?;
        Ok(added)
    }

    /// Remove by id, label or 1-based index (see [`AuthStore::remove`]).
    pub fn remove(&mut self, target: &str) -> Result<Credential, PoolError> {
        let provider = self.provider.clone();
        let removed = self.store.remove(&provider, target)?;
        if self.current_id.as_deref() == Some(removed.id.as_str()) {
            self.current_id = None;
        }
        self.reload()?;
        Ok(removed)
    }

    /// Move `id` to the back of the priority order and renumber 0..n.
    fn move_to_back(&mut self, id: &str) -> Result<bool, PoolError> {
        let provider = self.provider.clone();
        self.mutate(move |slice, _| {
            let mut order = sorted_indices(slice, &provider);
            let Some(pos) = order
                .iter()
                .position(|&i| slice[i].get("id").and_then(Value::as_str) == Some(id))
            else {
                return false;
            };
            let moved = order.remove(pos);
            order.push(moved);
            for (priority, &i) in order.iter().enumerate() {
                if let Some(obj) = slice[i].as_object_mut() {
                    obj.insert("priority".to_owned(), Value::from(priority));
                }
            }
            true
        })
    }

    /// Give stored entries without an id a fresh one.
    fn assign_missing_ids(&mut self) -> Result<bool, PoolError> {
        let seed = self.store.rng().next_u64();
        self.mutate(move |slice, _| {
            let missing: Vec<usize> = (0..slice.len())
                .filter(|&i| {
                    slice[i].is_object()
                        && slice[i]
                            .get("id")
                            .and_then(Value::as_str)
                            .is_none_or(str::is_empty)
                })
                .collect();
            for (n, &i) in missing.iter().enumerate() {
                let id = fresh_id(slice, seed.wrapping_add(n as u64));
                if let Some(obj) = slice[i].as_object_mut() {
                    obj.insert("id".to_owned(), Value::from(id));
                }
            }
            !missing.is_empty()
        })
    }

    /// One locked transaction on this provider's stored list; `f` gets the
    /// list and the current time and reports whether it changed anything.
    fn mutate(
        &mut self,
        f: impl FnOnce(&mut Vec<Value>, SystemTime) -> bool,
    ) -> Result<bool, PoolError> {
        let provider = self.provider.clone();
        let now = self.store.clock().now();
        let (changed, entries) = self.store.transact(|root| {
            let changed = with_slice(root, &provider, |slice| f(slice, now));
            Ok(((changed, credentials_in(root, &provider)), changed))
        })?;
        self.entries = entries;
        Ok(changed)
    }
}

#[cfg(test)]
#[path = "pool_tests.rs"]
mod tests;
