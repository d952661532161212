//! Matrix events in and out: a room message as an [`Incoming`] (who,
//! where, which thread, whether the bot was addressed, its file), and the
//! content of the events the bot sends.

use serde_json::{Value, json};

use super::Matrix;
use crate::messaging::media::MediaKind;
use crate::messaging::platform::{ChatKind, ChatRef, Incoming, Sender};

/// Whether `body` names the bot: its full id, or its localpart as a word.
fn names_bot(body: &str, id: &str, localpart: &str) -> bool {
    if !id.is_empty() && body.contains(id) {
        return true;
    }
    if localpart.is_empty() {
        return false;
    }
    let lower = body.to_lowercase();
    let word = localpart.to_lowercase();
    lower.match_indices(&word).any(|(at, _)| {
        let before = lower[..at].chars().next_back();
        let after = lower[at + word.len()..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        edge(before) && edge(after)
    })
}

/// `body` without the bot's id and `@localpart` (a mention's own words).
fn strip_mention(body: &str, id: &str, localpart: &str) -> String {
    let mut text = if id.is_empty() {
        body.to_owned()
    } else {
        body.replace(id, "")
    };
    if !localpart.is_empty() {
        let at = format!("@{localpart}");
        let lower = text.to_lowercase();
        if let Some(pos) = lower.find(&at.to_lowercase()) {
            text.replace_range(pos..pos + at.len(), "");
        }
    }
    let text = text.trim_start_matches([':', ',', ' ']).trim();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A reply's body without its quoted fallback (`> …` lines up to a blank one).
fn without_reply_fallback(body: &str) -> &str {
    if !body.starts_with("> ") {
        return body;
    }
    match body.find("\n\n") {
        Some(end) => &body[end + 2..],
        None => body,
    }
}

/// The gateway's commands, which Matrix clients also take with a `!`
/// (Element keeps `/…` for its own commands).
const COMMANDS: &[&str] = &[
    "approve", "deny", "stop", "new", "reset", "status", "usage", "model", "queue", "q", "steer",
    "retry", "undo", "compress", "title", "yolo", "sethome", "set-home", "help",
];

/// `!approve session` → `/approve session`; other text as it is.
fn bang_command(text: &str) -> String {
    if let Some(rest) = text.strip_prefix('!') {
        let word = rest.split_whitespace().next().unwrap_or_default();
        if COMMANDS.iter().any(|c| c.eq_ignore_ascii_case(word)) {
            return format!("/{rest}");
        }
    }
    text.to_owned()
}

/// The kind of file a message type carries.
fn file_kind(msgtype: &str, content: &Value) -> Option<&'static str> {
    match msgtype {
        "m.image" => Some("image"),
        "m.audio" if content.get("org.matrix.msc3245.voice").is_some() => Some("voice"),
        "m.audio" => Some("audio"),
        "m.video" => Some("video"),
        "m.file" => Some("document"),
        _ => None,
    }
}

impl Matrix {
    /// The message in `event`, or `None` for anything the bot does not answer
    /// (its own events, edits, notices, bridges' puppets, other event types).
    pub(super) async fn incoming(&self, room: &str, event: &Value) -> Option<Incoming> {
        if event["type"] != "m.room.message" {
            return None;
        }
        let me = self.me();
        let sender = event["sender"].as_str()?;
        if me.id.is_empty() || sender.eq_ignore_ascii_case(&me.id) {
            return None;
        }
        // Application-service users (bridges) are not people.
        if sender.trim_start_matches('@').starts_with('_') {
            return None;
        }
        let content = &event["content"];
        if content["m.relates_to"]["rel_type"] == "m.replace" {
            return None;
        }
        let msgtype = content["msgtype"].as_str().unwrap_or_default();
        let kind = file_kind(msgtype, content);
        if msgtype != "m.text" && kind.is_none() {
            return None;
        }
        let event_id = event["event_id"].as_str()?.to_owned();
        let dm = self.member_count(room).await <= 2;
        let body = without_reply_fallback(content["body"].as_str().unwrap_or_default());
        let mentioned = content["m.mentions"]["user_ids"]
            .as_array()
            .is_some_and(|ids| ids.iter().any(|i| i.as_str() == Some(me.id.as_str())))
            || names_bot(body, &me.id, &me.username)
            || content["formatted_body"]
                .as_str()
                .is_some_and(|h| h.contains(&format!("matrix.to/#/{}", me.id)));
        let thread = match &content["m.relates_to"] {
            r if r["rel_type"] == "m.thread" => r["event_id"].as_str().map(str::to_owned),
            _ if !dm && self.auto_thread => Some(event_id.clone()),
            _ => None,
        };
        let mut text = if kind.is_some() {
            // A file's body is its name unless a caption was given.
            match content["filename"].as_str() {
                Some(name) if name != body => body.to_owned(),
                _ => String::new(),
            }
        } else if mentioned {
            bang_command(&strip_mention(body, &me.id, &me.username))
        } else {
            bang_command(body)
        };
        let command = text.starts_with('/');
        let mut attachments = Vec::new();
        if let Some(kind) = kind {
            match self.download(kind, content).await {
                Ok(file) => attachments.push(file),
                Err(e) => text = format!("{text}\n\n[{e}]").trim().to_owned(),
            }
        }
        let localpart = sender
            .trim_start_matches('@')
            .split(':')
            .next()
            .unwrap_or(sender);
        Some(Incoming {
            key: event_id,
            chat: ChatRef {
                id: room.to_owned(),
                kind: if dm { ChatKind::Dm } else { ChatKind::Group },
                thread_id: thread,
                name: None,
            },
            sender: Sender {
                id: sender.to_owned(),
                name: localpart.to_owned(),
            },
            text,
            addressed: dm || mentioned || command,
            button_press: None,
            attachments,
        })
    }
}

/// Puts `content` in `chat`'s thread, when it has one.
pub(super) fn relate_to_thread(content: &mut Value, chat: &ChatRef) {
    if let Some(thread) = &chat.thread_id {
        content["m.relates_to"] = json!({
            "rel_type": "m.thread",
            "event_id": thread,
            "is_falling_back": true,
            "m.in_reply_to": {"event_id": thread},
        });
    }
}

/// The content of a file message.
pub(super) fn file_content(
    kind: MediaKind,
    name: &str,
    caption: &str,
    uri: &str,
    mime: &str,
    size: usize,
) -> Value {
    let msgtype = match kind {
        MediaKind::Image => "m.image",
        MediaKind::Video => "m.video",
        MediaKind::Audio | MediaKind::Voice => "m.audio",
        MediaKind::Document => "m.file",
    };
    let mut content = json!({
        "msgtype": msgtype,
        "body": if caption.trim().is_empty() { name } else { caption },
        "filename": name,
        "url": uri,
        "info": {"mimetype": mime, "size": size},
    });
    if kind == MediaKind::Voice {
        content["org.matrix.msc3245.voice"] = json!({});
    }
    content
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_found_and_stripped() {
        assert!(names_bot(
            "hey @bot:hermes.test do it",
            "@bot:hermes.test",
            "bot"
        ));
        assert!(names_bot("Bot, do it", "@bot:hermes.test", "bot"));
        assert!(!names_bot("robots do it", "@bot:hermes.test", "bot"));
        assert_eq!(
            strip_mention(
                "@bot:hermes.test: list the files",
                "@bot:hermes.test",
                "bot"
            ),
            "list the files"
        );
        assert_eq!(
            strip_mention("@bot please", "@bot:hermes.test", "bot"),
            "please"
        );
    }

    #[test]
    fn bang_commands_become_commands() {
        assert_eq!(bang_command("!approve session"), "/approve session");
        assert_eq!(bang_command("!important note"), "!important note");
    }

    #[test]
    fn reply_fallbacks_are_dropped() {
        assert_eq!(
            without_reply_fallback("> <@a:x> hi\n> there\n\nanswer"),
            "answer"
        );
        assert_eq!(without_reply_fallback("plain"), "plain");
    }

    #[test]
    fn file_messages() {
        let c = file_content(MediaKind::Voice, "a.ogg", "", "mxc://s/x", "audio/ogg", 3);
        assert_eq!(c["msgtype"], "m.audio");
        assert_eq!(c["body"], "a.ogg");
        assert!(c.get("org.matrix.msc3245.voice").is_some());
        assert_eq!(file_kind("m.file", &json!({})), Some("document"));
        assert_eq!(file_kind("m.emote", &json!({})), None);
    }
}
