//! A real Matrix homeserver on loopback: Synapse (`HERMES_SYNAPSE_PYTHON`,
//! a venv with `matrix-synapse`, as `.ci/run` installs it), SQLite, client
//! API only, rate limits lifted, users registered with the shared secret;
//! and a person's client for the tests (rooms, messages, files).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::free_port;
use super::gateway::http_try;

const SECRET: &str = "hermes-test-shared-secret";

/// Registers users through Synapse's shared-secret admin API (an HMAC-SHA1
/// over nonce, name, password and admin flag) and prints `id token` lines.
const REGISTER: &str = r#"
import hashlib, hmac, json, sys, urllib.request
base, secret = sys.argv[1], sys.argv[2]
def call(method, path, body=None):
    req = urllib.request.Request(base + path, method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())
for name in sys.argv[3:]:
    nonce = call("GET", "/_synapse/admin/v1/register")["nonce"]
    mac = hmac.new(secret.encode(), digestmod=hashlib.sha1)
    mac.update(b"\x00".join(p.encode() for p in (nonce, name, name + "-pass", "notadmin")))
    r = call("POST", "/_synapse/admin/v1/register", {"nonce": nonce, "username": name,
        "password": name + "-pass", "admin": False, "mac": mac.hexdigest()})
    print(r["user_id"], r["access_token"])
"#;

/// A running Synapse; killed on drop.
pub struct Synapse {
    child: Child,
    pub port: u16,
    dir: tempfile::TempDir,
    python: std::path::PathBuf,
}

impl Drop for Synapse {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A registered user and their client.
#[derive(Debug, Clone)]
pub struct User {
    pub id: String,
    pub token: String,
    pub port: u16,
}

/// Percent-encodes a path segment.
pub fn enc(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn config(port: u16, dir: &std::path::Path) -> String {
    let lim = "{per_second: 10000, burst_count: 10000}";
    let d = dir.display();
    format!(
        "server_name: hermes.test\npid_file: {d}/homeserver.pid\n\
         listeners:\n  - port: {port}\n    bind_addresses: ['127.0.0.1']\n    type: http\n    tls: false\n    resources:\n      - names: [client]\n        compress: false\n\
         database:\n  name: sqlite3\n  args:\n    database: {d}/homeserver.db\n\
         log_config: {d}/log.config\nmedia_store_path: {d}/media\nsigning_key_path: {d}/signing.key\n\
         registration_shared_secret: {SECRET}\nenable_registration: false\n\
         macaroon_secret_key: test-macaroon\nform_secret: test-form\nreport_stats: false\n\
         trusted_key_servers: []\nsuppress_key_server_warning: true\nfederation_domain_whitelist: []\n\
         presence:\n  enabled: false\nurl_preview_enabled: false\n\
         rc_message: {lim}\nrc_registration: {lim}\nrc_login:\n  address: {lim}\n  account: {lim}\n  failed_attempts: {lim}\n\
         rc_joins:\n  local: {lim}\n  remote: {lim}\nrc_invites:\n  per_room: {lim}\n  per_user: {lim}\n  per_issuer: {lim}\n\
         rc_room_creation: {lim}\nrc_media_create: {lim}\n"
    )
}

impl Synapse {
    /// Starts one, or `None` when `HERMES_SYNAPSE_PYTHON` is not set.
    pub fn start() -> Option<Self> {
        let python = std::path::PathBuf::from(std::env::var_os("HERMES_SYNAPSE_PYTHON")?);
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        std::fs::write(dir.path().join("homeserver.yaml"), config(port, dir.path())).unwrap();
        std::fs::write(
            dir.path().join("log.config"),
            format!(
                "version: 1\nformatters:\n  f:\n    format: '%(asctime)s %(levelname)s %(name)s %(message)s'\n\
                 handlers:\n  file:\n    class: logging.FileHandler\n    formatter: f\n    filename: {}/homeserver.log\n\
                 root:\n  level: WARNING\n  handlers: [file]\ndisable_existing_loggers: false\n",
                dir.path().display()
            ),
        )
        .unwrap();
        let key = Command::new(&python)
            .args([
                "-c",
                "import sys\nfrom signedjson.key import generate_signing_key, write_signing_keys\n\
                 write_signing_keys(open(sys.argv[1], 'w'), [generate_signing_key('a_1')])",
            ])
            .arg(dir.path().join("signing.key"))
            .status()
            .unwrap();
        assert!(key.success());
        let child = Command::new(&python)
            .args(["-m", "synapse.app.homeserver", "-c"])
            .arg(dir.path().join("homeserver.yaml"))
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let hs = Self {
            child,
            port,
            dir,
            python,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while http_try(port, "GET", "/health", &[], "").map_or(true, |a| a.2.trim() != "OK") {
            assert!(
                Instant::now() < deadline,
                "Synapse never came up: {}",
                std::fs::read_to_string(hs.dir.path().join("homeserver.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(hs)
    }

    /// Its base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Registers `names` (password `<name>-pass`).
    pub fn register(&self, names: &[&str]) -> Vec<User> {
        let out = Command::new(&self.python)
            .args(["-c", REGISTER, &self.url(), SECRET])
            .args(names)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let (id, token) = l.split_once(' ').unwrap();
                User {
                    id: id.to_owned(),
                    token: token.to_owned(),
                    port: self.port,
                }
            })
            .collect()
    }
}

impl User {
    /// One client API call as this user.
    pub fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let auth = format!("Bearer {}", self.token);
        let text = body.map(Value::to_string).unwrap_or_default();
        let mut headers = vec![("Authorization", auth.as_str())];
        if body.is_some() {
            headers.push(("Content-Type", "application/json"));
        }
        let (status, _, reply) = http_try(self.port, method, path, &headers, &text).unwrap();
        (status, serde_json::from_str(&reply).unwrap_or(Value::Null))
    }

    /// A direct chat with `other` (invited); its room id.
    pub fn open_dm(&self, other: &str) -> String {
        let (status, v) = self.call(
            "POST",
            "/_matrix/client/v3/createRoom",
            Some(&json!({"invite": [other], "is_direct": true, "preset": "trusted_private_chat"})),
        );
        assert_eq!(status, 200, "{v}");
        v["room_id"].as_str().unwrap().to_owned()
    }

    /// A room with `others` invited; its room id.
    pub fn open_room(&self, name: &str, others: &[&str]) -> String {
        let (status, v) = self.call(
            "POST",
            "/_matrix/client/v3/createRoom",
            Some(&json!({"invite": others, "name": name, "preset": "private_chat"})),
        );
        assert_eq!(status, 200, "{v}");
        v["room_id"].as_str().unwrap().to_owned()
    }

    /// Sends an event's content; its event id.
    pub fn send(&self, room: &str, content: &Value) -> String {
        let txn = uuid_like();
        let (status, v) = self.call(
            "PUT",
            &format!(
                "/_matrix/client/v3/rooms/{}/send/m.room.message/{txn}",
                enc(room)
            ),
            Some(content),
        );
        assert_eq!(status, 200, "{v}");
        v["event_id"].as_str().unwrap().to_owned()
    }

    /// Says `text` in `room`.
    pub fn say(&self, room: &str, text: &str) -> String {
        self.send(room, &json!({"msgtype": "m.text", "body": text}))
    }

    /// Waits until `other` has joined `room`.
    pub fn wait_joined(&self, room: &str, other: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (_, v) = self.call(
                "GET",
                &format!("/_matrix/client/v3/rooms/{}/joined_members", enc(room)),
                None,
            );
            if v["joined"].get(other).is_some() {
                return;
            }
            assert!(Instant::now() < deadline, "{other} never joined {room}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The room's message events from `sender`, oldest first.
    pub fn messages_from(&self, room: &str, sender: &str) -> Vec<Value> {
        let (_, v) = self.call(
            "GET",
            &format!(
                "/_matrix/client/v3/rooms/{}/messages?dir=b&limit=200",
                enc(room)
            ),
            None,
        );
        let mut events: Vec<Value> = v["chunk"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e["sender"] == sender)
            .collect();
        events.reverse();
        events
    }

    /// Waits for a message from `sender` whose (latest) text satisfies `want`.
    pub fn wait_for(
        &self,
        room: &str,
        sender: &str,
        what: &str,
        want: impl Fn(&str) -> bool,
    ) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            for e in self.messages_from(room, sender) {
                let content = &e["content"];
                let text = content["m.new_content"]["body"]
                    .as_str()
                    .or(content["body"].as_str())
                    .unwrap_or_default();
                if e["type"] == "m.room.message" && want(text) {
                    return e;
                }
            }
            assert!(
                Instant::now() < deadline,
                "no message {what}: {:#?}",
                self.messages_from(room, sender)
                    .iter()
                    .map(|e| e["content"].clone())
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Uploads `bytes` as `name`; its `mxc://` address.
    pub fn upload(&self, name: &str, mime: &str, bytes: &str) -> String {
        let auth = format!("Bearer {}", self.token);
        let (status, _, reply) = http_try(
            self.port,
            "POST",
            &format!("/_matrix/media/v3/upload?filename={}", enc(name)),
            &[("Authorization", &auth), ("Content-Type", mime)],
            bytes,
        )
        .unwrap();
        assert_eq!(status, 200, "{reply}");
        let v: Value = serde_json::from_str(&reply).unwrap();
        v["content_uri"].as_str().unwrap().to_owned()
    }

    /// Downloads an `mxc://` address.
    pub fn download(&self, mxc: &str) -> String {
        let (server, id) = mxc.trim_start_matches("mxc://").split_once('/').unwrap();
        let auth = format!("Bearer {}", self.token);
        let (status, _, body) = http_try(
            self.port,
            "GET",
            &format!(
                "/_matrix/client/v1/media/download/{}/{}",
                enc(server),
                enc(id)
            ),
            &[("Authorization", &auth)],
            "",
        )
        .unwrap();
        assert_eq!(status, 200, "{body}");
        body
    }
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "t{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}
