//! The event bridge: polls state.db (cheaply: only when its mtime moves) and
//! queues new user/assistant messages of gateway conversations as events
//! with cursors, for `events_poll` and `events_wait`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value, json};
use tokio::sync::Notify;

use super::index::{Index, message_text};

/// Events kept; older ones fall off.
const QUEUE_LIMIT: usize = 1000;
/// Time between checks of state.db.
pub const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// One queued event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Position in the stream (1, 2, …).
    pub cursor: u64,
    /// `message`, `approval_requested` or `approval_resolved`.
    pub kind: String,
    /// The conversation.
    pub session_key: String,
    /// The event's own fields.
    pub data: Map<String, Value>,
}

impl Event {
    /// As the tools return it.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("cursor".into(), json!(self.cursor));
        out.insert("type".into(), json!(self.kind));
        out.insert("session_key".into(), json!(self.session_key));
        out.extend(self.data.clone());
        Value::Object(out)
    }
}

#[derive(Default)]
struct State {
    queue: VecDeque<Event>,
    cursor: u64,
    last_seen: HashMap<String, f64>,
    mtime: Option<SystemTime>,
    approvals: HashMap<String, Value>,
}

/// The bridge; cheap to clone.
#[derive(Clone)]
pub struct Bridge {
    index: Index,
    state: Arc<Mutex<State>>,
    woke: Arc<Notify>,
}

impl Bridge {
    /// A bridge over `index` (nothing polled until [`Bridge::poll_once`] or [`Bridge::run`]).
    pub fn new(index: Index) -> Self {
        Self {
            index,
            state: Arc::default(),
            woke: Arc::new(Notify::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Polls until the process ends.
    pub async fn run(self) {
        loop {
            let me = self.clone();
            let _ = tokio::task::spawn_blocking(move || me.poll_once()).await;
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }

    /// One look at state.db; queues what is new.
    pub fn poll_once(&self) {
        // New rows land in the WAL first; the main file's mtime moves only
        // at checkpoints, so both count.
        let modified = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let mut wal = self.index.path().as_os_str().to_owned();
        wal.push("-wal");
        let mtime = modified(self.index.path()).max(modified(std::path::Path::new(&wal)));
        // A shared database has no file to watch: every poll reads it.
        if !self.index.is_shared() {
            let mut state = self.lock();
            if mtime.is_none() || state.mtime == mtime {
                return;
            }
            state.mtime = mtime;
        }
        for entry in self.index.entries() {
            let Ok(messages) = self.index.messages(&entry.session_id) else {
                continue;
            };
            let last_seen = self
                .lock()
                .last_seen
                .get(&entry.session_key)
                .copied()
                .unwrap_or(0.0);
            let mut newest = last_seen;
            for msg in &messages {
                newest = newest.max(msg.timestamp);
                if !(msg.role == "user" || msg.role == "assistant") || msg.timestamp <= last_seen {
                    continue;
                }
                let content = message_text(msg);
                if content.is_empty() {
                    continue;
                }
                let mut data = Map::new();
                data.insert("role".into(), json!(msg.role));
                data.insert(
                    "content".into(),
                    json!(content.chars().take(500).collect::<String>()),
                );
                data.insert("timestamp".into(), json!(python_float(msg.timestamp)));
                data.insert("message_id".into(), json!(msg.id.to_string()));
                self.enqueue("message", &entry.session_key, data);
            }
            self.lock()
                .last_seen
                .insert(entry.session_key.clone(), newest);
        }
    }

    fn enqueue(&self, kind: &str, session_key: &str, data: Map<String, Value>) {
        {
            let mut state = self.lock();
            state.cursor += 1;
            let cursor = state.cursor;
            state.queue.push_back(Event {
                cursor,
                kind: kind.into(),
                session_key: session_key.into(),
                data,
            });
            while state.queue.len() > QUEUE_LIMIT {
                state.queue.pop_front();
            }
        }
        self.woke.notify_waiters();
    }

    /// Events after `after`, optionally for one conversation.
    pub fn poll(&self, after: u64, session_key: Option<&str>, limit: usize) -> (Vec<Event>, u64) {
        let events: Vec<Event> = self
            .lock()
            .queue
            .iter()
            .filter(|e| {
                e.cursor > after && session_key.is_none_or(|k| k.is_empty() || e.session_key == k)
            })
            .take(limit)
            .cloned()
            .collect();
        let next = events.last().map_or(after, |e| e.cursor);
        (events, next)
    }

    /// The first event after `after`, waiting up to `timeout`.
    pub async fn wait(
        &self,
        after: u64,
        session_key: Option<&str>,
        timeout: Duration,
    ) -> Option<Event> {
        let deadline = Instant::now() + timeout;
        loop {
            let woke = self.woke.notified();
            if let Some(event) = self.poll(after, session_key, 1).0.pop() {
                return Some(event);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            let _ = tokio::time::timeout(left.min(POLL_INTERVAL), woke).await;
        }
    }

    /// Approval requests seen during this run (none are fed from outside yet).
    pub fn open_approvals(&self) -> Vec<Value> {
        let mut list: Vec<Value> = self.lock().approvals.values().cloned().collect();
        list.sort_by_key(|a| {
            a.get("created_at")
                .map(Value::to_string)
                .unwrap_or_default()
        });
        list
    }

    /// Resolves a pending approval.
    pub fn respond(&self, id: &str, decision: &str) -> Value {
        let approval = self.lock().approvals.remove(id);
        let Some(approval) = approval else {
            return json!({"error": format!("Approval not found: {id}")});
        };
        let key = approval
            .get("session_key")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut data = Map::new();
        data.insert("approval_id".into(), json!(id));
        data.insert("decision".into(), json!(decision));
        self.enqueue("approval_resolved", &key, data);
        json!({"resolved": true, "approval_id": id, "decision": decision})
    }
}

/// A timestamp as Python's `str(float)` writes it (`1700000000.0`).
fn python_float(ts: f64) -> String {
    if ts.fract() == 0.0 {
        format!("{ts:.1}")
    } else {
        ts.to_string()
    }
}
