//! DM pairing, in the reference's files: an unknown user gets an
//! 8-character code; the owner approves it with `hermes pairing approve`.
//! Codes are stored only as salted hashes, expire after an hour, and five
//! wrong approvals lock the one who tried them out for an hour. Files are 0600.
//!
//! Unlike the reference, whose lockout covers the whole platform (the owner
//! could approve nothing and no stranger got a code for an hour), the lockout
//! is per guesser: the owner at this machine holds the pairing files and
//! could rewrite them, so locking them out protects nothing, and a guesser
//! elsewhere (a chat user, a remote session) only locks out themselves.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// The code alphabet: no 0/O/1/I.
const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
/// Characters in a code.
const CODE_LENGTH: usize = 8;
/// A code is good for an hour.
pub const CODE_TTL_SECS: f64 = 3600.0;
/// One code per user per ten minutes.
pub const RATE_LIMIT_SECS: f64 = 600.0;
/// Lockout after too many wrong approvals.
pub const LOCKOUT_SECS: f64 = 3600.0;
/// Codes waiting per platform.
const MAX_PENDING: usize = 3;
/// Wrong approvals before the lockout.
const MAX_FAILURES: i64 = 5;

/// The message to an unknown user with their code.
pub fn code_message(platform: &str, code: &str) -> String {
    format!(
        "Hi~ I don't recognize you yet!\n\nHere's your pairing code: `{code}`\n\n\
         Ask the bot owner to run:\n`hermes pairing approve {platform} {code}`"
    )
}

/// Who tries a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approver<'a> {
    /// The owner at this machine (`hermes pairing approve`): never locked out.
    Owner,
    /// Anyone else, by id: wrong codes count against this id alone.
    Other(&'a str),
}

/// The message when no code can be issued now.
pub const TOO_MANY: &str = "Too many pairing requests right now~ Please try again later!";

/// What an approval attempt came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Approval {
    /// The user may now talk to the bot.
    Approved {
        /// Their platform id.
        user_id: String,
        /// Their name when they asked.
        user_name: String,
    },
    /// No pending code matches (wrong or expired).
    NotFound,
    /// The guesser is locked out for this many more seconds.
    LockedOut(f64),
}

/// A code waiting for approval, as `hermes pairing list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCode {
    /// The platform.
    pub platform: String,
    /// The first 8 hex characters of the stored hash (the code itself is not kept).
    pub code_hint: String,
    /// Who asked.
    pub user_id: String,
    /// Their name.
    pub user_name: String,
    /// How long ago, in minutes.
    pub age_minutes: u64,
}

/// An approved user.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovedUser {
    /// The platform.
    pub platform: String,
    /// Their platform id.
    pub user_id: String,
    /// Their name.
    pub user_name: String,
}

/// The pairing files of one home.
#[derive(Debug)]
pub struct PairingStore {
    dir: PathBuf,
    /// Serialises read-modify-write within this process.
    guard: Mutex<()>,
    now: fn() -> f64,
}

fn wall_clock() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn random_bytes() -> [u8; 16] {
    *uuid::Uuid::new_v4().as_bytes()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn salted_hash(salt_hex: &str, code: &str) -> String {
    let salt: Vec<u8> = (0..salt_hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(salt_hex.get(i * 2..i * 2 + 2)?, 16).ok())
        .collect();
    let mut hasher = Sha256::new();
    hasher.update(&salt);
    hasher.update(code.as_bytes());
    hex(&hasher.finalize())
}

/// Compares without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

impl PairingStore {
    /// The store under `hermes_home`: `pairing/` when that older directory
    /// has content, else `platforms/pairing/` (as the reference chooses).
    pub fn new(hermes_home: &Path) -> Self {
        let legacy = hermes_home.join("pairing");
        let has_content = std::fs::read_dir(&legacy).is_ok_and(|mut d| d.next().is_some());
        let dir = if has_content {
            legacy
        } else {
            hermes_home.join("platforms/pairing")
        };
        Self::at(dir)
    }

    /// A store in `dir`.
    pub fn at(dir: PathBuf) -> Self {
        Self {
            dir,
            guard: Mutex::new(()),
            now: wall_clock,
        }
    }

    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    #[cfg(test)]
    fn with_clock(mut self, now: fn() -> f64) -> Self {
        self.now = now;
        self
    }

    fn read(&self, name: &str) -> Map<String, Value> {
        std::fs::read_to_string(self.dir.join(name))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| match v {
                Value::Object(m) => Some(m),
                _ => None,
            })
            .unwrap_or_default()
    }

    fn write(&self, name: &str, data: &Map<String, Value>) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::create_dir_all(&self.dir)?;
        let path = self.dir.join(name);
        let tmp = self.dir.join(format!(".{name}.tmp"));
        let text = serde_json::to_string_pretty(&Value::Object(data.clone()))
            .map_err(std::io::Error::other)?;
        {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
        }
        std::fs::rename(&tmp, &path)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.guard.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The user was approved on `platform`.
    pub fn is_approved(&self, platform: &str, user_id: &str) -> bool {
        self.read(&format!("{platform}-approved.json"))
            .contains_key(user_id.trim())
    }

    fn purge_expired(&self, platform: &str) -> std::io::Result<Map<String, Value>> {
        let name = format!("{platform}-pending.json");
        let mut pending = self.read(&name);
        let now = (self.now)();
        let before = pending.len();
        pending.retain(|_, entry| {
            entry
                .get("created_at")
                .and_then(Value::as_f64)
                .is_some_and(|t| now - t <= CODE_TTL_SECS)
        });
        if pending.len() != before {
            self.write(&name, &pending)?;
        }
        Ok(pending)
    }

    fn locked_out_for(
        &self,
        limits: &Map<String, Value>,
        platform: &str,
        who: &str,
    ) -> Option<f64> {
        let until = limits
            .get(&format!("_lockout:{platform}:{who}"))
            .and_then(Value::as_f64)?;
        let left = until - (self.now)();
        (left > 0.0).then_some(left)
    }

    /// The user asked for a code less than ten minutes ago.
    pub fn is_rate_limited(&self, platform: &str, user_id: &str) -> bool {
        self.read("_rate_limits.json")
            .get(&format!("{platform}:{}", user_id.trim()))
            .and_then(Value::as_f64)
            .is_some_and(|t| (self.now)() - t < RATE_LIMIT_SECS)
    }

    /// Starts the ten-minute quiet period for a user (after a refusal).
    pub fn note_request(&self, platform: &str, user_id: &str) -> std::io::Result<()> {
        let _guard = self.lock();
        let mut limits = self.read("_rate_limits.json");
        limits.insert(
            format!("{platform}:{}", user_id.trim()),
            json!((self.now)()),
        );
        self.write("_rate_limits.json", &limits)
    }

    /// A new code for the user, or `None` when the user is locked out for
    /// wrong guesses, asked recently, or three codes already wait.
    pub fn issue_code(
        &self,
        platform: &str,
        user_id: &str,
        user_name: &str,
    ) -> std::io::Result<Option<String>> {
        let _guard = self.lock();
        let mut pending = self.purge_expired(platform)?;
        let mut limits = self.read("_rate_limits.json");
        let user_id = user_id.trim();
        let now = (self.now)();
        let recent = limits
            .get(&format!("{platform}:{user_id}"))
            .and_then(Value::as_f64)
            .is_some_and(|t| now - t < RATE_LIMIT_SECS);
        if self.locked_out_for(&limits, platform, user_id).is_some()
            || recent
            || pending.len() >= MAX_PENDING
        {
            return Ok(None);
        }
        let random = random_bytes();
        let code: String = random[..CODE_LENGTH]
            .iter()
            .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
            .collect();
        let salt = hex(&random_bytes());
        let entry_id = hex(&random_bytes()[..8]);
        pending.insert(
            entry_id,
            json!({
                "hash": salted_hash(&salt, &code),
                "salt": salt,
                "user_id": user_id,
                "user_name": user_name,
                "created_at": now,
            }),
        );
        self.write(&format!("{platform}-pending.json"), &pending)?;
        limits.insert(format!("{platform}:{user_id}"), json!(now));
        self.write("_rate_limits.json", &limits)?;
        Ok(Some(code))
    }

    /// Approves `code` on `platform`, tried `by` someone.
    pub fn approve(&self, platform: &str, code: &str, by: Approver) -> std::io::Result<Approval> {
        let _guard = self.lock();
        let mut pending = self.purge_expired(platform)?;
        let mut limits = self.read("_rate_limits.json");
        let guesser = match by {
            Approver::Owner => None,
            Approver::Other(id) => Some(id.trim()),
        };
        if let Some(left) = guesser.and_then(|who| self.locked_out_for(&limits, platform, who)) {
            return Ok(Approval::LockedOut(left));
        }
        let code = code.trim().to_ascii_uppercase();
        let found = pending.iter().find_map(|(id, entry)| {
            let hash = entry.get("hash")?.as_str()?;
            let salt = entry.get("salt")?.as_str()?;
            same(&salted_hash(salt, &code), hash).then(|| id.clone())
        });
        let Some(id) = found else {
            return match guesser {
                Some(who) => self.count_failure(&mut limits, platform, who),
                None => Ok(Approval::NotFound),
            };
        };
        let entry = pending.remove(&id).unwrap_or(Value::Null);
        let user_id = entry
            .get("user_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let user_name = entry
            .get("user_name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        self.write(&format!("{platform}-pending.json"), &pending)?;
        let approved_name = format!("{platform}-approved.json");
        let mut approved = self.read(&approved_name);
        approved.insert(
            user_id.clone(),
            json!({"user_name": user_name, "approved_at": (self.now)()}),
        );
        self.write(&approved_name, &approved)?;
        Ok(Approval::Approved { user_id, user_name })
    }

    /// Counts a wrong code against `who`, locking them out at the limit.
    fn count_failure(
        &self,
        limits: &mut Map<String, Value>,
        platform: &str,
        who: &str,
    ) -> std::io::Result<Approval> {
        let key = format!("_failures:{platform}:{who}");
        let failures = limits.get(&key).and_then(Value::as_i64).unwrap_or(0) + 1;
        let outcome = if failures >= MAX_FAILURES {
            limits.insert(
                format!("_lockout:{platform}:{who}"),
                json!((self.now)() + LOCKOUT_SECS),
            );
            limits.insert(key, json!(0));
            Approval::LockedOut(LOCKOUT_SECS)
        } else {
            limits.insert(key, json!(failures));
            Approval::NotFound
        };
        self.write("_rate_limits.json", limits)?;
        Ok(outcome)
    }

    /// Removes an approved user; `false` when they were not approved.
    pub fn revoke(&self, platform: &str, user_id: &str) -> std::io::Result<bool> {
        let _guard = self.lock();
        let name = format!("{platform}-approved.json");
        let mut approved = self.read(&name);
        if approved.remove(user_id.trim()).is_none() {
            return Ok(false);
        }
        self.write(&name, &approved)?;
        Ok(true)
    }

    /// Drops every waiting code; returns how many.
    pub fn clear_pending(&self) -> std::io::Result<usize> {
        let _guard = self.lock();
        let mut count = 0;
        for platform in self.platforms("pending") {
            let name = format!("{platform}-pending.json");
            count += self.read(&name).len();
            self.write(&name, &Map::new())?;
        }
        Ok(count)
    }

    fn platforms(&self, kind: &str) -> Vec<String> {
        let suffix = format!("-{kind}.json");
        let mut out: Vec<String> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| !n.starts_with('_') && !n.starts_with('.'))
            .filter_map(|n| n.strip_suffix(&suffix).map(str::to_owned))
            .collect();
        out.sort();
        out
    }

    /// Codes waiting, per platform.
    pub fn pending(&self) -> Vec<PendingCode> {
        let now = (self.now)();
        let mut out = Vec::new();
        for platform in self.platforms("pending") {
            let Ok(entries) = self.purge_expired(&platform) else {
                continue;
            };
            for entry in entries.values() {
                let text = |k: &str| entry.get(k).and_then(Value::as_str).unwrap_or_default();
                let age = now
                    - entry
                        .get("created_at")
                        .and_then(Value::as_f64)
                        .unwrap_or(now);
                out.push(PendingCode {
                    platform: platform.clone(),
                    code_hint: text("hash").chars().take(8).collect(),
                    user_id: text("user_id").to_owned(),
                    user_name: text("user_name").to_owned(),
                    age_minutes: (age.max(0.0) / 60.0) as u64,
                });
            }
        }
        out
    }

    /// Approved users, per platform.
    pub fn approved(&self) -> Vec<ApprovedUser> {
        let mut out = Vec::new();
        for platform in self.platforms("approved") {
            let entries: BTreeMap<String, Value> = self
                .read(&format!("{platform}-approved.json"))
                .into_iter()
                .collect();
            for (user_id, entry) in entries {
                out.push(ApprovedUser {
                    platform: platform.clone(),
                    user_id,
                    user_name: entry
                        .get("user_name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                });
            }
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_code_approves_once_and_files_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let store = PairingStore::new(dir.path());
        let code = store.issue_code("telegram", "42", "Ann").unwrap().unwrap();
        assert_eq!(code.len(), 8);
        assert!(code.bytes().all(|b| ALPHABET.contains(&b)));
        assert!(!store.is_approved("telegram", "42"));
        assert!(
            store.issue_code("telegram", "42", "Ann").unwrap().is_none(),
            "rate limited"
        );
        assert_eq!(store.pending().len(), 1);
        let got = store
            .approve("telegram", &code.to_lowercase(), Approver::Owner)
            .unwrap();
        assert_eq!(
            got,
            Approval::Approved {
                user_id: "42".into(),
                user_name: "Ann".into()
            }
        );
        assert!(store.is_approved("telegram", "42"));
        assert_eq!(
            store.approve("telegram", &code, Approver::Owner).unwrap(),
            Approval::NotFound
        );
        let mode = std::fs::metadata(dir.path().join("platforms/pairing/telegram-approved.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let pending =
            std::fs::read_to_string(dir.path().join("platforms/pairing/telegram-pending.json"))
                .unwrap();
        assert!(!pending.contains(&code), "the code itself is never stored");
        assert!(store.revoke("telegram", "42").unwrap());
        assert!(!store.is_approved("telegram", "42"));
    }

    #[test]
    fn five_wrong_codes_lock_out_the_guesser_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = PairingStore::new(dir.path());
        let code = store.issue_code("telegram", "7", "Bo").unwrap().unwrap();
        let mallory = Approver::Other("666");
        for _ in 0..4 {
            assert_eq!(
                store.approve("telegram", "AAAAAAAA", mallory).unwrap(),
                Approval::NotFound
            );
        }
        assert!(matches!(
            store.approve("telegram", "AAAAAAAA", mallory).unwrap(),
            Approval::LockedOut(_)
        ));
        assert!(
            matches!(
                store.approve("telegram", &code, mallory).unwrap(),
                Approval::LockedOut(_)
            ),
            "a locked-out guesser cannot approve even a right code"
        );
        assert!(
            store
                .issue_code("telegram", "666", "Mal")
                .unwrap()
                .is_none(),
            "nor get a code"
        );
        assert!(
            store.issue_code("telegram", "8", "Cy").unwrap().is_some(),
            "other strangers still get codes"
        );
        assert_eq!(
            store
                .approve("telegram", "AAAAAAAA", Approver::Other("9"))
                .unwrap(),
            Approval::NotFound,
            "another guesser is not locked out"
        );
        assert!(matches!(
            store.approve("telegram", &code, Approver::Owner).unwrap(),
            Approval::Approved { .. }
        ));
        assert!(store.is_approved("telegram", "7"));
    }

    #[test]
    fn the_owner_is_never_locked_out() {
        let dir = tempfile::tempdir().unwrap();
        let store = PairingStore::new(dir.path());
        let code = store.issue_code("slack", "U7", "Bo").unwrap().unwrap();
        for _ in 0..20 {
            assert_eq!(
                store.approve("slack", "AAAAAAAA", Approver::Owner).unwrap(),
                Approval::NotFound
            );
        }
        assert!(store.issue_code("slack", "U8", "Cy").unwrap().is_some());
        assert!(matches!(
            store.approve("slack", &code, Approver::Owner).unwrap(),
            Approval::Approved { .. }
        ));
    }

    fn later() -> f64 {
        wall_clock() + CODE_TTL_SECS + 5.0
    }

    #[test]
    fn codes_expire_after_an_hour() {
        let dir = tempfile::tempdir().unwrap();
        let code = PairingStore::new(dir.path())
            .issue_code("slack", "U1", "Al")
            .unwrap()
            .unwrap();
        let store = PairingStore::new(dir.path()).with_clock(later);
        assert_eq!(
            store.approve("slack", &code, Approver::Owner).unwrap(),
            Approval::NotFound
        );
        assert!(store.pending().is_empty());
    }
}
