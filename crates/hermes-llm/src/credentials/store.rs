//! `auth.json` access: lock-free reads, and read-modify-write transactions
//! under an exclusive lock on the sidecar `auth.lock`, written atomically
//! (temp file + rename). Mutations patch the on-disk JSON in place, so
//! unknown fields and other providers' entries survive untouched.

use std::fs::{self, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::entry::{Credential, new_entry_json};
use super::timefmt::format_iso_utc;
use super::{Clock, PoolError, RandomSource};

/// The `version` the reference writes.
pub const AUTH_STORE_VERSION: i64 = 1;

/// The whole `auth.json` document.
pub(crate) type Root = Map<String, Value>;

/// Handle on one `auth.json`, for listing, adding and removing credentials.
pub struct AuthStore {
    path: PathBuf,
    clock: Arc<dyn Clock>,
    rng: Box<dyn RandomSource>,
}

impl std::fmt::Debug for AuthStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthStore")
            .field("path", &self.path)
            .finish()
    }
}

impl AuthStore {
    /// A store at `path` (usually `$HERMES_HOME/auth.json`). `rng` names new
    /// entries.
    pub fn new(
        path: impl Into<PathBuf>,
        clock: Arc<dyn Clock>,
        rng: Box<dyn RandomSource>,
    ) -> Self {
        Self {
            path: path.into(),
            clock,
            rng,
        }
    }

    /// The `auth.json` path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sidecar lock file (`auth.lock` beside `auth.json`).
    pub fn lock_path(&self) -> PathBuf {
        self.path.with_extension("lock")
    }

    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub(crate) fn rng(&mut self) -> &mut dyn RandomSource {
        self.rng.as_mut()
    }

    /// The provider's credentials, sorted by priority.
    pub fn list(&self, provider: &str) -> Result<Vec<Credential>, PoolError> {
        let root = read_root(&self.path)?;
        Ok(credentials_in(&root, &normalize_provider(provider)))
    }

    /// Append a manual API-key credential. `label` defaults to
    /// `api-key-<n>`, the reference's default.
    pub fn add(
        &mut self,
        provider: &str,
        key: &str,
        label: Option<&str>,
    ) -> Result<Credential, PoolError> {
        let provider = normalize_provider(provider);
        let key = key.trim();
        if key.is_empty() {
            return Err(PoolError::EmptyKey);
        }
        let seed = self.rng.next_u64();
        let id = self.transact(|root| {
            with_slice(root, &provider, |slice| {
                let id = fresh_id(slice, seed);
                let label = label
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map_or_else(|| format!("api-key-{}", slice.len() + 1), str::to_owned);
                let priority = slice
                    .iter()
                    .filter_map(|e| Credential::from_json(&provider, e))
                    .map(|c| c.priority)
                    .max()
                    .map_or(0, |p| p + 1);
                slice.push(new_entry_json(&provider, &id, &label, priority, key));
                Ok((id, true))
            })
        })?;
        self.list(&provider)?
            .into_iter()
            .find(|c| c.id == id)
            .ok_or(PoolError::NotFound(id))
    }

    /// Remove one credential named by id, label (case-insensitive, must be
    /// unique) or 1-based index in priority order; the rest are renumbered.
    pub fn remove(&mut self, provider: &str, target: &str) -> Result<Credential, PoolError> {
        let provider = normalize_provider(provider);
        self.transact(|root| {
            with_slice(root, &provider, |slice| {
                let sorted = sorted_indices(slice, &provider);
                let creds: Vec<Credential> = sorted
                    .iter()
                    .filter_map(|&i| Credential::from_json(&provider, &slice[i]))
                    .collect();
                let position = resolve_target(&creds, target)?;
                let removed = creds[position].clone();
                let mut keep: Vec<Value> = Vec::with_capacity(slice.len());
                for (rank, &i) in sorted.iter().enumerate() {
                    if rank != position {
                        keep.push(slice[i].clone());
                    }
                }
                keep.extend(slice.iter().filter(|v| !v.is_object()).cloned());
                for (priority, value) in keep.iter_mut().enumerate() {
                    if let Some(obj) = value.as_object_mut() {
                        obj.insert("priority".to_owned(), Value::from(priority));
                    }
                }
                *slice = keep;
                Ok((removed, true))
            })
        })
    }

    /// Lock, re-read, apply `f`, and write back when `f` reports a change.
    pub(crate) fn transact<T>(
        &self,
        f: impl FnOnce(&mut Root) -> Result<(T, bool), PoolError>,
    ) -> Result<T, PoolError> {
        let io = |source| PoolError::Io {
            path: self.path.clone(),
            source,
        };
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(io)?;
        }
        let lock_path = self.lock_path();
        let lock = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&lock_path)
            .map_err(|source| PoolError::Io {
                path: lock_path.clone(),
                source,
            })?;
        lock.lock().map_err(|source| PoolError::Io {
            path: lock_path.clone(),
            source,
        })?;
        let result = (|| {
            let mut root = read_root(&self.path)?;
            let (value, changed) = f(&mut root)?;
            if changed {
                root.insert("version".to_owned(), Value::from(AUTH_STORE_VERSION));
                root.insert(
                    "updated_at".to_owned(),
                    Value::from(format_iso_utc(self.clock.now())),
                );
                write_atomic(&self.path, &root)?;
            }
            Ok(value)
        })();
        // Closing the file also releases the lock; unlock explicitly first.
        let _ = lock.unlock();
        result
    }
}

/// Pool keys are trimmed and lowercased, as in the reference.
pub(crate) fn normalize_provider(provider: &str) -> String {
    provider.trim().to_lowercase()
}

/// Read `auth.json`; a missing file is an empty store.
pub(crate) fn read_root(path: &Path) -> Result<Root, PoolError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(empty_root()),
        Err(source) => {
            return Err(PoolError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(empty_root());
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|source| PoolError::Corrupt {
        path: path.to_owned(),
        source,
    })?;
    match value {
        Value::Object(mut root) => {
            if !root.get("providers").is_some_and(Value::is_object) {
                root.insert("providers".to_owned(), Value::Object(Map::new()));
            }
            Ok(root)
        }
        _ => Err(PoolError::Shape {
            path: path.to_owned(),
            detail: "top level is not a JSON object".to_owned(),
        }),
    }
}

fn empty_root() -> Root {
    let mut root = Map::new();
    root.insert("version".to_owned(), Value::from(AUTH_STORE_VERSION));
    root.insert("providers".to_owned(), Value::Object(Map::new()));
    root
}

/// Run `f` on `credential_pool.<provider>`, created (or replaced when
/// malformed) first.
pub(crate) fn with_slice<T>(
    root: &mut Root,
    provider: &str,
    f: impl FnOnce(&mut Vec<Value>) -> T,
) -> T {
    if !root.get("credential_pool").is_some_and(Value::is_object) {
        root.insert("credential_pool".to_owned(), Value::Object(Map::new()));
    }
    let mut fallback = Vec::new();
    let slice = match root
        .get_mut("credential_pool")
        .and_then(Value::as_object_mut)
    {
        Some(pool) => {
            let slot = pool
                .entry(provider.to_owned())
                .or_insert_with(|| Value::Array(Vec::new()));
            if !slot.is_array() {
                *slot = Value::Array(Vec::new());
            }
            match slot {
                Value::Array(list) => list,
                _ => &mut fallback,
            }
        }
        None => &mut fallback,
    };
    f(slice)
}

/// The provider's parsed entries, stably sorted by priority.
pub(crate) fn credentials_in(root: &Root, provider: &str) -> Vec<Credential> {
    let Some(list) = root
        .get("credential_pool")
        .and_then(|p| p.get(provider))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let mut creds: Vec<Credential> = list
        .iter()
        .filter_map(|v| Credential::from_json(provider, v))
        .collect();
    creds.sort_by_key(|c| c.priority);
    creds
}

/// Indices of the object entries in `slice`, stably sorted by priority.
pub(crate) fn sorted_indices(slice: &[Value], provider: &str) -> Vec<usize> {
    let mut keyed: Vec<(i64, usize)> = slice
        .iter()
        .enumerate()
        .filter_map(|(i, v)| Credential::from_json(provider, v).map(|c| (c.priority, i)))
        .collect();
    keyed.sort_by_key(|&(p, _)| p);
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// The stored object whose `id` is `id`.
pub(crate) fn find_entry_mut<'a>(
    slice: &'a mut [Value],
    id: &str,
) -> Option<&'a mut Map<String, Value>> {
    slice
        .iter_mut()
        .filter_map(Value::as_object_mut)
        .find(|o| o.get("id").and_then(Value::as_str) == Some(id))
}

/// A six-hex-digit id not already used in `slice`.
pub(crate) fn fresh_id(slice: &[Value], seed: u64) -> String {
    let taken = |id: &str| {
        slice
            .iter()
            .any(|v| v.get("id").and_then(Value::as_str) == Some(id))
    };
    let mut state = seed;
    loop {
        let id = format!("{:06x}", super::splitmix(&mut state) & 0x00FF_FFFF);
        if !taken(&id) {
            return id;
        }
    }
}

fn resolve_target(creds: &[Credential], target: &str) -> Result<usize, PoolError> {
    let raw = target.trim();
    if raw.is_empty() {
        return Err(PoolError::NotFound(String::new()));
    }
    if let Some(i) = creds.iter().position(|c| c.id == raw) {
        return Ok(i);
    }
    let wanted = raw.to_lowercase();
    let by_label: Vec<usize> = creds
        .iter()
        .enumerate()
        .filter(|(_, c)| c.label.trim().to_lowercase() == wanted)
        .map(|(i, _)| i)
        .collect();
    match by_label.as_slice() {
        [one] => return Ok(*one),
        [] => {}
        _ => return Err(PoolError::Ambiguous(raw.to_owned())),
    }
    match raw.parse::<usize>() {
        Ok(n) if (1..=creds.len()).contains(&n) => Ok(n - 1),
        _ => Err(PoolError::NotFound(raw.to_owned())),
    }
}

/// Write `root` to a unique temp file beside `path` (mode 0600), fsync it,
/// rename it over `path`, then fsync the directory.
fn write_atomic(path: &Path, root: &Root) -> Result<(), PoolError> {
    let mut payload = serde_json::to_string_pretty(root).map_err(|e| PoolError::Shape {
        path: path.to_owned(),
        detail: e.to_string(),
    })?;
    payload.push('\n');
    hermes_fs::write_atomic(path, payload.as_bytes(), hermes_fs::Access::Private).map_err(
        |source| PoolError::Io {
            path: path.to_owned(),
            source,
        },
    )
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
