//! What the gateway needs from a messaging platform: receive messages,
//! send and edit them, show typing, offer buttons. Each adapter speaks its
//! platform's API behind this trait; the chat logic is shared.

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

pub use super::media::OutgoingFile;

/// A JSON id or name as text: strings as they are, numbers written out,
/// anything else empty (platforms send ids as either).
pub fn json_text(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// What a platform can do, and its limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Capabilities {
    /// Longest message text, in characters.
    pub max_len: usize,
    /// Minimum time between edits of one message (its rate limit).
    pub edit_interval: Duration,
    /// Messages can carry buttons.
    pub buttons: bool,
}

/// The kind of conversation a message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatKind {
    /// A direct message with one person.
    Dm,
    /// A group chat.
    Group,
    /// A broadcast channel.
    Channel,
    /// A thread inside a group or channel.
    Thread,
}

impl ChatKind {
    /// The name the reference stores in `sessions.chat_type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dm => "dm",
            Self::Group => "group",
            Self::Channel => "channel",
            Self::Thread => "thread",
        }
    }
}

/// Where a message was sent, and where answers go.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChatRef {
    /// The platform's chat (or channel) id.
    pub id: String,
    /// What kind of chat it is.
    pub kind: ChatKind,
    /// A thread (topic) inside the chat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// A human name for it (group title or the person's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Who sent a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sender {
    /// The platform's user id.
    pub id: String,
    /// A display name.
    pub name: String,
}

/// A file that came with a message, saved locally.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// What it is: `image`, `voice`, `audio`, `video` or `document`.
    pub kind: String,
    /// Where it was saved.
    pub path: String,
}

/// One thing a person did on the platform: a message, or a button press.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Incoming {
    /// A key unique per platform (repeat deliveries carry the same one).
    pub key: String,
    /// Where.
    pub chat: ChatRef,
    /// Who.
    pub sender: Sender,
    /// The text (a caption for media, the button's data for a press).
    pub text: String,
    /// The bot was addressed (a mention, a reply to it, a DM).
    #[serde(default)]
    pub addressed: bool,
    /// A button press: the platform's id for acknowledging it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub button_press: Option<String>,
    /// Files that came with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

/// A button under a message; pressing it comes back as an [`Incoming`] whose
/// text is `data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    /// What it says.
    pub label: String,
    /// What it sends back.
    pub data: String,
}

/// A message to send.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outgoing {
    /// The text, in markdown unless `plain`.
    pub text: String,
    /// Send the text as it is, without formatting.
    pub plain: bool,
    /// Rows of buttons under it (platforms without buttons leave them off).
    pub buttons: Vec<Vec<Button>>,
}

impl Outgoing {
    /// Markdown text.
    pub fn markdown(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    /// Text sent as it is.
    pub fn plain(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            plain: true,
            ..Self::default()
        }
    }
}

/// What came back from a poll: messages, and the position after them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Batch {
    /// The messages, oldest first.
    pub messages: Vec<Incoming>,
    /// Where to continue from (saved with the messages, so a restart
    /// neither loses nor repeats them); `None` leaves it unchanged.
    pub cursor: Option<String>,
}

/// A platform call that failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlatformError {
    /// The network or the platform is down for now: try again later.
    #[error("{0}")]
    Transient(String),
    /// The platform refused the request (bad token, no such chat …).
    #[error("{0}")]
    Rejected(String),
    /// The platform (or an emulator of it) does not offer this call.
    #[error("not supported: {0}")]
    Unsupported(String),
}

/// The bot's own identity on a platform.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BotIdentity {
    /// The bot's user id.
    pub id: String,
    /// Its user name (what mentions name).
    pub username: String,
}

/// Where the work on a person's message stands (for platforms that show it
/// with a reaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The agent took the message.
    Working,
    /// Answered.
    Done,
    /// The turn failed.
    Failed,
}

/// A messaging platform.
pub trait Adapter: Send + Sync + 'static {
    /// Its name: `telegram`, `discord`, `slack` (the sessions' `source`).
    fn name(&self) -> &'static str;

    /// What it can do.
    fn capabilities(&self) -> &Capabilities;

    /// Checks the credentials and learns who the bot is.
    fn connect(&self) -> BoxFuture<'_, Result<BotIdentity, PlatformError>>;

    /// Whether only one replica may receive for an account at a time
    /// (Telegram's `getUpdates`, a Discord shard, Slack's Socket Mode, whose
    /// events must reach the replica running the chat's turn); a platform
    /// whose events any replica may take would say `false`.
    fn single_consumer(&self) -> bool {
        true
    }

    /// Which account of the platform this is (a digest, never a secret):
    /// replicas on one database take one lease per account.
    fn account(&self) -> String {
        self.name().to_owned()
    }

    /// Keeps each wait for messages within `max` (a replica must stop
    /// polling before its lease runs out); nothing for connections that
    /// have no poll to shorten.
    fn limit_poll(&self, max: Duration) {
        let _ = max;
    }

    /// Stops receiving until the next [`Adapter::receive`]: a replica that
    /// lost (or never held) the account's lease keeps no connection that
    /// takes the account's events (a Discord shard); nothing for polls.
    fn stand_by(&self) {}

    /// Waits for what came after `cursor` (a long poll, or the next events a
    /// connection delivered).
    fn receive<'a>(
        &'a self,
        cursor: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Batch, PlatformError>>;

    /// Sends a message; returns its id.
    fn send<'a>(
        &'a self,
        chat: &'a ChatRef,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<String, PlatformError>>;

    /// Replaces the text (and buttons) of a message the bot sent; platforms
    /// whose messages cannot change say [`PlatformError::Unsupported`]
    /// (answers then go out whole).
    fn edit<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        let _ = (chat, message_id, message);
        Box::pin(async { Err(PlatformError::Unsupported("editing a sent message".into())) })
    }

    /// Shows that the bot is working; nothing where the platform has no such sign.
    fn typing<'a>(&'a self, chat: &'a ChatRef) -> BoxFuture<'a, Result<(), PlatformError>> {
        let _ = chat;
        Box::pin(async { Ok(()) })
    }

    /// Acknowledges a button press (stops the client's spinner), with a short
    /// note; nothing for platforms without buttons.
    fn answer_press<'a>(
        &'a self,
        press_id: &'a str,
        note: &'a str,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        let _ = (press_id, note);
        Box::pin(async { Ok(()) })
    }

    /// Sends a file (with a caption); returns the message id. Platforms that
    /// cannot take files say [`PlatformError::Unsupported`].
    fn send_file<'a>(
        &'a self,
        chat: &'a ChatRef,
        file: &'a OutgoingFile,
        caption: &'a str,
    ) -> BoxFuture<'a, Result<String, PlatformError>> {
        let _ = (chat, file, caption);
        Box::pin(async { Err(PlatformError::Unsupported("sending files".into())) })
    }

    /// Shows how the work on `message` stands (a reaction on it); nothing
    /// where the platform has no such thing.
    fn mark<'a>(
        &'a self,
        message: &'a Incoming,
        progress: Progress,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        let _ = (message, progress);
        Box::pin(async { Ok(()) })
    }
}

/// A short, stable digest of `text` (FNV-1a): names an account in a lease
/// without the token that identifies it.
pub fn digest(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}
