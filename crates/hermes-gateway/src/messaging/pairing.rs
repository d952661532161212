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
use std::path::Path;
use std::sync::Arc;

use hermes_state::documents::{Documents, HomeDocuments};

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
/// Request times, failure counts and lockouts.
const LIMITS: &str = "_rate_limits.json";

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

/// The pairing files of one home (or of the database replicas share).
pub struct PairingStore {
    /// Their folder, relative to the home.
    folder: String,
    docs: Arc<dyn Documents>,
    /// Where they are, for messages.
    place: String,
    now: fn() -> f64,
}

impl std::fmt::Debug for PairingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PairingStore")
            .field("place", &self.place)
            .finish()
    }
}

fn wall_clock() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn random_bytes() -> [u8; 16] {
    *uuid::Uuid::new_v4().as_bytes()
}

fn salted_hash(salt_hex: &str, code: &str) -> String {
    let salt: Vec<u8> = (0..salt_hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(salt_hex.get(i * 2..i * 2 + 2)?, 16).ok())
        .collect();
    let mut hasher = Sha256::new();
    hasher.update(&salt);
    hasher.update(code.as_bytes());
    hex::encode(hasher.finalize())
}

/// Compares without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn as_object(text: Option<&str>) -> Map<String, Value> {
    text.and_then(|t| serde_json::from_str::<Value>(t).ok())
        .and_then(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default()
}

/// The files one change reads and writes, as JSON objects.
struct Files<'a> {
    names: &'a [String],
    texts: &'a mut [Option<String>],
}

impl Files<'_> {
    fn slot(&self, file: &str) -> Option<usize> {
        self.names
            .iter()
            .position(|n| n.rsplit('/').next() == Some(file))
    }

    fn get(&self, file: &str) -> Map<String, Value> {
        as_object(self.slot(file).and_then(|i| self.texts[i].as_deref()))
    }

    fn put(&mut self, file: &str, data: &Map<String, Value>) -> std::io::Result<()> {
        let i = self
            .slot(file)
            .ok_or_else(|| std::io::Error::other(format!("{file} was not opened for writing")))?;
        let text = serde_json::to_string_pretty(&Value::Object(data.clone()))
            .map_err(std::io::Error::other)?;
        self.texts[i] = Some(text);
        Ok(())
    }
}

impl PairingStore {
    /// The files under `hermes_home`: `pairing/` when that older directory
    /// has content, else `platforms/pairing/` (as the reference chooses).
    pub fn new(hermes_home: &Path) -> Self {
        Self::with_documents(Arc::new(HomeDocuments::new(hermes_home)))
    }

    /// The pairing documents in `docs` (the home's files, or the database
    /// replicas share), choosing the folder as [`PairingStore::new`] does.
    pub fn with_documents(docs: Arc<dyn Documents>) -> Self {
        let legacy = docs.list("pairing").is_ok_and(|names| !names.is_empty());
        let folder = if legacy {
            "pairing"
        } else {
            "platforms/pairing"
        };
        let place = docs.describe(folder);
        Self {
            folder: folder.to_owned(),
            docs,
            place,
            now: wall_clock,
        }
    }

    /// Where the files are, for messages.
    pub fn place(&self) -> &str {
        &self.place
    }

    #[cfg(test)]
    fn with_clock(mut self, now: fn() -> f64) -> Self {
        self.now = now;
        self
    }

    fn name(&self, file: &str) -> String {
        format!("{}/{file}", self.folder)
    }

    fn read(&self, file: &str) -> Map<String, Value> {
        as_object(self.docs.read(&self.name(file)).ok().flatten().as_deref())
    }

    /// Runs `edit` over `files` and writes what it changed, all or nothing
    /// (again from a fresh read when another process wrote meanwhile).
    fn change<R>(
        &self,
        files: &[String],
        mut edit: impl FnMut(&mut Files<'_>) -> std::io::Result<R>,
    ) -> std::io::Result<R> {
        let names: Vec<String> = files.iter().map(|f| self.name(f)).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        hermes_state::documents::update(self.docs.as_ref(), &refs, None, |texts| {
            edit(&mut Files {
                names: &names,
                texts,
            })
        })
        .map_err(std::io::Error::other)?
    }

    /// The user was approved on `platform`.
    pub fn is_approved(&self, platform: &str, user_id: &str) -> bool {
        self.read(&format!("{platform}-approved.json"))
            .contains_key(user_id.trim())
    }

    /// The codes of `platform` younger than an hour (older ones dropped).
    fn purge_expired(
        &self,
        files: &mut Files<'_>,
        platform: &str,
    ) -> std::io::Result<Map<String, Value>> {
        let name = format!("{platform}-pending.json");
        let mut pending = files.get(&name);
        let now = (self.now)();
        let before = pending.len();
        pending.retain(|_, entry| {
            entry
                .get("created_at")
                .and_then(Value::as_f64)
                .is_some_and(|t| now - t <= CODE_TTL_SECS)
        });
        if pending.len() != before {
            files.put(&name, &pending)?;
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
        self.read(LIMITS)
            .get(&format!("{platform}:{}", user_id.trim()))
            .and_then(Value::as_f64)
            .is_some_and(|t| (self.now)() - t < RATE_LIMIT_SECS)
    }

    /// Starts the ten-minute quiet period for a user (after a refusal).
    pub fn note_request(&self, platform: &str, user_id: &str) -> std::io::Result<()> {
        let now = (self.now)();
        self.change(&[LIMITS.to_owned()], |files| {
            let mut limits = files.get(LIMITS);
            limits.insert(format!("{platform}:{}", user_id.trim()), json!(now));
            files.put(LIMITS, &limits)
        })
    }

    /// A new code for the user, or `None` when the user is locked out for
    /// wrong guesses, asked recently, or three codes already wait.
    pub fn issue_code(
        &self,
        platform: &str,
        user_id: &str,
        user_name: &str,
    ) -> std::io::Result<Option<String>> {
        let pending_file = format!("{platform}-pending.json");
        self.change(&[pending_file.clone(), LIMITS.to_owned()], |files| {
            let mut pending = self.purge_expired(files, platform)?;
            let mut limits = files.get(LIMITS);
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
            let salt = hex::encode(random_bytes());
            let entry_id = hex::encode(&random_bytes()[..8]);
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
            files.put(&pending_file, &pending)?;
            limits.insert(format!("{platform}:{user_id}"), json!(now));
            files.put(LIMITS, &limits)?;
            Ok(Some(code))
        })
    }

    /// Approves `code` on `platform`, tried `by` someone.
    pub fn approve(&self, platform: &str, code: &str, by: Approver) -> std::io::Result<Approval> {
        let pending_file = format!("{platform}-pending.json");
        let approved_file = format!("{platform}-approved.json");
        let opened = [
            pending_file.clone(),
            LIMITS.to_owned(),
            approved_file.clone(),
        ];
        self.change(&opened, |files| {
            let mut pending = self.purge_expired(files, platform)?;
            let mut limits = files.get(LIMITS);
            let guesser = match by {
                Approver::Owner => None,
                Approver::Other(id) => Some(id.trim()),
            };
            if let Some(left) = guesser.and_then(|who| self.locked_out_for(&limits, platform, who))
            {
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
                    Some(who) => {
                        let outcome = self.count_failure(&mut limits, platform, who);
                        files.put(LIMITS, &limits)?;
                        Ok(outcome)
                    }
                    None => Ok(Approval::NotFound),
                };
            };
            let entry = pending.remove(&id).unwrap_or(Value::Null);
            let text = |k: &str| {
                entry
                    .get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let (user_id, user_name) = (text("user_id"), text("user_name"));
            files.put(&pending_file, &pending)?;
            let mut approved = files.get(&approved_file);
            approved.insert(
                user_id.clone(),
                json!({"user_name": user_name, "approved_at": (self.now)()}),
            );
            files.put(&approved_file, &approved)?;
            Ok(Approval::Approved { user_id, user_name })
        })
    }

    /// Counts a wrong code against `who`, locking them out at the limit.
    fn count_failure(
        &self,
        limits: &mut Map<String, Value>,
        platform: &str,
        who: &str,
    ) -> Approval {
        let key = format!("_failures:{platform}:{who}");
        let failures = limits.get(&key).and_then(Value::as_i64).unwrap_or(0) + 1;
        if failures >= MAX_FAILURES {
            limits.insert(
                format!("_lockout:{platform}:{who}"),
                json!((self.now)() + LOCKOUT_SECS),
            );
            limits.insert(key, json!(0));
            Approval::LockedOut(LOCKOUT_SECS)
        } else {
            limits.insert(key, json!(failures));
            Approval::NotFound
        }
    }

    /// Removes an approved user; `false` when they were not approved.
    pub fn revoke(&self, platform: &str, user_id: &str) -> std::io::Result<bool> {
        let file = format!("{platform}-approved.json");
        self.change(std::slice::from_ref(&file), |files| {
            let mut approved = files.get(&file);
            if approved.remove(user_id.trim()).is_none() {
                return Ok(false);
            }
            files.put(&file, &approved)?;
            Ok(true)
        })
    }

    /// Drops every waiting code; returns how many.
    pub fn clear_pending(&self) -> std::io::Result<usize> {
        let opened: Vec<String> = self
            .platforms("pending")
            .into_iter()
            .map(|p| format!("{p}-pending.json"))
            .collect();
        self.change(&opened, |files| {
            let mut count = 0;
            for file in &opened {
                count += files.get(file).len();
                files.put(file, &Map::new())?;
            }
            Ok(count)
        })
    }

    fn platforms(&self, kind: &str) -> Vec<String> {
        let suffix = format!("-{kind}.json");
        let mut out: Vec<String> = self
            .docs
            .list(&self.folder)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|n| n.rsplit('/').next().map(str::to_owned))
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
            let file = format!("{platform}-pending.json");
            let purged = self.change(std::slice::from_ref(&file), |files| {
                self.purge_expired(files, &platform)
            });
            let Ok(entries) = purged else {
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
