//! The telegram-test-api emulator (npm, installed by `.ci/run` under
//! `HERMES_CHAT_EMULATORS`) playing Telegram, and a gateway connected to it.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::gateway::http_try;
use super::{Sandbox, fixture, free_port};

pub const TOKEN: &str = "123456:TEST-token";

/// The emulator; killed on drop.
pub struct Emulator {
    child: Child,
    pub port: u16,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The installed node_modules, when the peers are installed.
pub fn modules() -> Option<PathBuf> {
    std::env::var_os("HERMES_CHAT_EMULATORS")
        .map(PathBuf::from)
        .filter(|p| p.join("telegram-test-api").exists())
}

impl Emulator {
    /// Starts it; `None` (the test is skipped) without the npm package.
    pub fn start() -> Option<Self> {
        Self::start_with(&[])
    }

    /// Starts it with `env` (the fixture's `TG_EMULATOR_*` switches).
    pub fn start_with(env: &[(&str, &str)]) -> Option<Self> {
        let modules = modules()?;
        let port = free_port();
        let mut child = Command::new("node")
            .arg(fixture("telegram_emulator.cjs"))
            .arg(port.to_string())
            .envs(env.iter().copied())
            .env("NODE_PATH", &modules)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "emulator did not start");
        Some(Self { child, port })
    }

    /// What `platforms.telegram.extra.base_url` should say.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/bot", self.port)
    }

    fn post(&self, path: &str, body: &Value) -> Value {
        let (status, _, text) = http_try(
            self.port,
            "POST",
            path,
            &[("Content-Type", "application/json")],
            &body.to_string(),
        )
        .unwrap();
        assert_eq!(status, 200, "{path}: {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// A person (`user`) writes `text` in a private chat with the bot.
    pub fn user_says(&self, user: i64, text: &str) {
        self.post(
            "/sendMessage",
            &json!({"botToken": TOKEN, "from": {"id": user, "first_name": format!("User{user}"), "is_bot": false},
                    "chat": {"id": user, "type": "private", "first_name": format!("User{user}")},
                    "date": 0, "text": text}),
        );
    }

    /// A person (`user`) writes `text` in the group chat `group` (a negative id).
    pub fn user_says_in_group(&self, user: i64, group: i64, text: &str) {
        self.post(
            "/sendMessage",
            &json!({"botToken": TOKEN, "from": {"id": user, "first_name": format!("User{user}"), "is_bot": false},
                    "chat": {"id": group, "type": "group", "title": "Team"},
                    "date": 0, "text": text}),
        );
    }

    /// A person presses a button under the bot's message `message` in a group.
    pub fn press_in_group(&self, user: i64, message: &Value, data: &str) {
        let chat = message["chat_id"].as_i64().unwrap_or(user);
        self.post(
            "/sendCallback",
            &json!({"botToken": TOKEN, "from": {"id": user, "first_name": format!("User{user}"), "is_bot": false},
                    "message": {"message_id": message["message_id"], "chat": {"id": chat, "type": "group", "title": "Team"}},
                    "data": data}),
        );
    }

    /// A person presses a button under the bot's message `message`.
    pub fn press(&self, user: i64, message: &Value, data: &str) {
        let chat = message["chat_id"].as_i64().unwrap_or(user);
        self.post(
            "/sendCallback",
            &json!({"botToken": TOKEN, "from": {"id": user, "first_name": format!("User{user}"), "is_bot": false},
                    "message": {"message_id": message["message_id"], "chat": {"id": chat, "type": "private"}},
                    "data": data}),
        );
    }

    /// Every message the bot sent to `chat`, as it reads now (edits applied):
    /// `{message_id, chat_id, text, reply_markup}`.
    pub fn bot_messages(&self, chat: i64) -> Vec<Value> {
        let history = self.post("/getUpdatesHistory", &json!({"token": TOKEN}));
        history["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|u| {
                u["message"]["chat_id"].as_i64().or_else(|| {
                    u["message"]["chat_id"]
                        .as_str()
                        .and_then(|s| s.parse().ok())
                }) == Some(chat)
            })
            .map(|u| {
                let mut m = u["message"].clone();
                m["message_id"] = u["messageId"].clone();
                m["chat_id"] = json!(chat);
                m
            })
            .collect()
    }

    /// Waits for a bot message to `chat` whose text (MarkdownV2 escapes
    /// removed) satisfies `want`.
    pub fn wait_for(&self, chat: i64, what: &str, want: impl Fn(&str) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(m) = self
                .bot_messages(chat)
                .into_iter()
                .find(|m| want(&m["text"].as_str().unwrap_or("").replace('\\', "")))
            {
                return m;
            }
            assert!(
                Instant::now() < deadline,
                "no bot message {what} in chat {chat}; got: {:#?}",
                self.bot_messages(chat)
                    .iter()
                    .map(|m| m["text"].clone())
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `hermes gateway run` on a chat platform; stderr goes to `gateway.log` in
/// the home. Killed (SIGKILL) on drop unless stopped first.
pub struct ChatGateway {
    pub child: Child,
    log: PathBuf,
}

impl Drop for ChatGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ChatGateway {
    /// Starts the gateway for Telegram with `env` and waits until it has connected.
    pub fn start(sb: &Sandbox, env: &[(&str, &str)]) -> Self {
        let mut all = vec![("TELEGRAM_BOT_TOKEN", TOKEN)];
        all.extend_from_slice(env);
        Self::start_with(sb, &all, "connected as @TestNameBot")
    }

    /// Starts the gateway with `env` and waits until its log says `ready`.
    pub fn start_with(sb: &Sandbox, env: &[(&str, &str)], ready: &str) -> Self {
        let log = sb.home.path().join("gateway.log");
        let file = std::fs::File::create(&log).unwrap();
        let child = sb
            .command()
            .args(["gateway", "run"])
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .unwrap();
        let gw = Self { child, log };
        gw.wait_log(ready);
        gw
    }

    /// The gateway's stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log contains `text`.
    pub fn wait_log(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.log().contains(text) {
            assert!(
                Instant::now() < deadline,
                "gateway log never said {text:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Sandbox config for Telegram on `emulator` (plus `extra` YAML).
pub fn configure(sb: &Sandbox, emulator: &Emulator, extra: &str) {
    sb.no_retries();
    sb.add_config(&format!(
        "platforms:\n  telegram:\n    extra:\n      base_url: {}\n{extra}",
        emulator.base_url()
    ));
}
