//! A small fake Discord for the gateway tests (no emulator exists): the
//! gateway WebSocket (Hello → Identify → READY, heartbeats acknowledged,
//! MESSAGE_CREATE and INTERACTION_CREATE pushed when a test "user" acts) and
//! the REST calls a bot makes (messages created and edited, typing,
//! interaction callbacks), all kept for the test to read.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::Message;

pub const TOKEN: &str = "discord-test-token";
pub const BOT_ID: &str = "999";

#[derive(Default)]
struct State {
    /// Bot messages: {id, channel_id, content, components}.
    messages: Vec<Value>,
    /// Events waiting for the connected client.
    outbox: Vec<Value>,
    next_id: u64,
    identified: bool,
    callbacks: usize,
    /// `PUT|DELETE <message> <emoji>` for each reaction call.
    reactions: Vec<String>,
}

/// The fake; its threads end with the test process.
pub struct FakeDiscord {
    state: Arc<Mutex<State>>,
    pub rest_port: u16,
    pub ws_port: u16,
}

fn http_reply(stream: &mut TcpStream, status: u16, body: &Value) {
    let text = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
}

fn serve_rest(mut stream: TcpStream, state: &Mutex<State>, ws_port: u16) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, path) = (
        parts.next().unwrap_or("").to_owned(),
        parts.next().unwrap_or("").to_owned(),
    );
    let mut length = 0;
    let mut authorized = false;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        let lower = header.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if header.trim() == format!("Authorization: Bot {TOKEN}")
            || lower.trim() == format!("authorization: bot {}", TOKEN.to_ascii_lowercase())
        {
            authorized = true;
        }
    }
    let mut raw = vec![0; length];
    let _ = reader.read_exact(&mut raw);
    let (body, files) = match serde_json::from_slice::<Value>(&raw) {
        Ok(body) => (body, Vec::new()),
        Err(_) => multipart(&raw),
    };
    if !authorized {
        return http_reply(
            &mut stream,
            401,
            &json!({"message": "401: Unauthorized", "code": 0}),
        );
    }
    let path = path.strip_prefix("/api/v10").unwrap_or(&path);
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut st = state.lock().unwrap();
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["users", "@me"]) => http_reply(
            &mut stream,
            200,
            &json!({"id": BOT_ID, "username": "hermes-test"}),
        ),
        ("GET", ["gateway", "bot"]) => http_reply(
            &mut stream,
            200,
            &json!({"url": format!("ws://127.0.0.1:{ws_port}")}),
        ),
        ("POST", ["channels", channel, "messages"]) => {
            st.next_id += 1;
            let id = format!("m{}", st.next_id);
            st.messages.push(
                json!({"id": id, "channel_id": channel, "content": body["content"],
                                    "components": body["components"], "files": files}),
            );
            http_reply(&mut stream, 200, &json!({"id": id, "channel_id": channel}));
        }
        ("PATCH", ["channels", _, "messages", id]) => {
            if let Some(m) = st.messages.iter_mut().find(|m| m["id"] == *id) {
                m["content"] = body["content"].clone();
                m["components"] = body["components"].clone();
            }
            http_reply(&mut stream, 200, &json!({"id": id}));
        }
        ("POST", ["channels", _, "typing"]) => http_reply(&mut stream, 204, &Value::Null),
        (
            "PUT" | "DELETE",
            [
                "channels",
                _,
                "messages",
                message,
                "reactions",
                emoji,
                "@me",
            ],
        ) => {
            st.reactions.push(format!("{method} {message} {emoji}"));
            http_reply(&mut stream, 204, &Value::Null)
        }
        ("POST", ["interactions", _, _, "callback"]) => {
            st.callbacks += 1;
            http_reply(&mut stream, 204, &Value::Null);
        }
        _ => http_reply(
            &mut stream,
            404,
            &json!({"message": "404: Not Found", "code": 0}),
        ),
    }
}

/// A multipart message body: its `payload_json` and its files (name, content).
fn multipart(raw: &[u8]) -> (Value, Vec<Value>) {
    let text = String::from_utf8_lossy(raw);
    let mut payload = Value::Null;
    let mut files = Vec::new();
    for part in text.split("\r\n--") {
        let Some((head, content)) = part.split_once("\r\n\r\n") else {
            continue;
        };
        let content = content.trim_end_matches("\r\n");
        if head.contains("name=\"payload_json\"") {
            payload = serde_json::from_str(content).unwrap_or(Value::Null);
        } else if let Some(name) = head
            .split("filename=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
        {
            files.push(json!({"filename": name, "content": content}));
        }
    }
    (payload, files)
}

fn serve_ws(stream: TcpStream, state: &Mutex<State>, ws_port: u16) {
    stream
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let Ok(mut ws) = tungstenite::accept(stream) else {
        return;
    };
    let _ = ws.send(Message::text(
        json!({"op": 10, "d": {"heartbeat_interval": 1000}}).to_string(),
    ));
    let mut seq = 0;
    loop {
        match ws.read() {
            Ok(Message::Text(text)) => {
                let payload: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
                match payload["op"].as_u64() {
                    Some(1) => {
                        let _ = ws.send(Message::text(json!({"op": 11}).to_string()));
                    }
                    Some(2 | 6) => {
                        if payload["d"]["token"] != TOKEN {
                            let _ = ws.close(None);
                            return;
                        }
                        state.lock().unwrap().identified = true;
                        seq += 1;
                        let ready = json!({"op": 0, "t": "READY", "s": seq, "d": {"session_id": "fake-session",
                            "resume_gateway_url": format!("ws://127.0.0.1:{ws_port}"),
                            "user": {"id": BOT_ID, "username": "hermes-test", "bot": true}}});
                        let _ = ws.send(Message::text(ready.to_string()));
                    }
                    _ => {}
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
        let events: Vec<Value> = std::mem::take(&mut state.lock().unwrap().outbox);
        for event in events {
            seq += 1;
            let mut frame = event;
            frame["s"] = json!(seq);
            if ws.send(Message::text(frame.to_string())).is_err() {
                return;
            }
        }
    }
}

impl FakeDiscord {
    /// Starts the REST and gateway listeners.
    pub fn start() -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let rest = TcpListener::bind("127.0.0.1:0").unwrap();
        let ws = TcpListener::bind("127.0.0.1:0").unwrap();
        let (rest_port, ws_port) = (
            rest.local_addr().unwrap().port(),
            ws.local_addr().unwrap().port(),
        );
        let s = state.clone();
        std::thread::spawn(move || {
            for stream in rest.incoming().flatten() {
                let s = s.clone();
                std::thread::spawn(move || serve_rest(stream, &s, ws_port));
            }
        });
        let s = state.clone();
        std::thread::spawn(move || {
            for stream in ws.incoming().flatten() {
                let s = s.clone();
                std::thread::spawn(move || serve_ws(stream, &s, ws_port));
            }
        });
        Self {
            state,
            rest_port,
            ws_port,
        }
    }

    /// config.yaml lines pointing the gateway here.
    pub fn config(&self) -> String {
        format!(
            "platforms:\n  discord:\n    extra:\n      base_url: http://127.0.0.1:{}/api/v10\n",
            self.rest_port
        )
    }

    /// Waits until a client has identified.
    pub fn wait_identified(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.state.lock().unwrap().identified {
            assert!(Instant::now() < deadline, "the gateway never identified");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A person writes in a DM channel (or a guild channel with `guild`).
    pub fn user_says(
        &self,
        channel: &str,
        user: &str,
        content: &str,
        guild: Option<&str>,
    ) -> String {
        let mut st = self.state.lock().unwrap();
        st.next_id += 1;
        let id = format!("u{}", st.next_id);
        let mut d = json!({"id": id, "channel_id": channel, "content": content,
            "author": {"id": user, "username": format!("user{user}")}, "mentions": [], "attachments": []});
        if let Some(guild) = guild {
            d["guild_id"] = json!(guild);
            if content.contains(&format!("<@{BOT_ID}>")) {
                d["mentions"] = json!([{"id": BOT_ID}]);
            }
        }
        st.outbox
            .push(json!({"op": 0, "t": "MESSAGE_CREATE", "d": d}));
        id
    }

    /// A person presses the button `custom_id` under a bot message.
    pub fn press(&self, channel: &str, user: &str, custom_id: &str) {
        let mut st = self.state.lock().unwrap();
        st.next_id += 1;
        let d = json!({"id": format!("i{}", st.next_id), "token": "itoken", "type": 3, "channel_id": channel,
            "user": {"id": user, "username": format!("user{user}")}, "data": {"custom_id": custom_id, "component_type": 2}});
        st.outbox
            .push(json!({"op": 0, "t": "INTERACTION_CREATE", "d": d}));
    }

    /// The bot's messages in `channel`, as they read now.
    pub fn messages(&self, channel: &str) -> Vec<Value> {
        let st = self.state.lock().unwrap();
        st.messages
            .iter()
            .filter(|m| m["channel_id"] == channel)
            .cloned()
            .collect()
    }

    /// Reaction calls: `PUT|DELETE <message> <emoji>`.
    pub fn reactions(&self) -> Vec<String> {
        self.state.lock().unwrap().reactions.clone()
    }

    /// Interaction callbacks answered.
    pub fn callbacks(&self) -> usize {
        self.state.lock().unwrap().callbacks
    }

    /// Waits for a bot message in `channel` whose content satisfies `want`.
    pub fn wait_for(&self, channel: &str, what: &str, want: impl Fn(&str) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(m) = self
                .messages(channel)
                .into_iter()
                .find(|m| want(m["content"].as_str().unwrap_or("")))
            {
                return m;
            }
            assert!(
                Instant::now() < deadline,
                "no bot message {what} in {channel}; got {:#?}",
                self.messages(channel)
                    .iter()
                    .map(|m| m["content"].clone())
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }
}
