//! What comes in from Slack as [`Incoming`] messages: events (messages and
//! mentions, threaded as the reference threads them), button presses and
//! slash commands.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::super::platform::{BotIdentity, ChatKind, ChatRef, Incoming, Sender, json_text};

/// How Slack conversations map to sessions (`platforms.slack.extra`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Threading {
    pub(super) reply_in_thread: bool,
    pub(super) dm_threads: bool,
}

/// What the connection task and the adapter both know.
#[derive(Debug, Default)]
pub(super) struct Shared {
    pub(super) me: BotIdentity,
    /// User id → display name.
    pub(super) names: HashMap<String, String>,
    /// `(channel, thread_ts)` the bot is talking in: replies there need no mention.
    pub(super) threads: HashSet<(String, String)>,
    /// `(channel, user)` → the thread that person last wrote in (where their
    /// slash commands go).
    pub(super) last_thread: HashMap<(String, String), String>,
}

/// Slack's message markup as plain text: `<url|label>` links, `<#C1|name>`
/// channels and the three escaped characters.
pub(super) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let inner = &rest[open + 1..open + close];
        let (target, label) = inner.split_once('|').unwrap_or((inner, ""));
        if let Some(channel) = target.strip_prefix('#') {
            out.push('#');
            out.push_str(if label.is_empty() { channel } else { label });
        } else if target.starts_with('@') || target.starts_with('!') {
            out.push('<');
            out.push_str(inner);
            out.push('>');
        } else if label.is_empty() || label == target {
            out.push_str(target.strip_prefix("mailto:").unwrap_or(target));
        } else {
            out.push_str(&format!("{label} ({target})"));
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// An `events_api` message or app_mention as an [`Incoming`] (its files not
/// yet fetched); `None` for what the bot ignores.
pub(super) fn parse_event(
    event: &Value,
    shared: &Shared,
    threading: Threading,
) -> Option<Incoming> {
    let kind = event.get("type").and_then(Value::as_str)?;
    let subtype = event.get("subtype").and_then(Value::as_str);
    if !matches!(kind, "message" | "app_mention")
        || subtype.is_some_and(|s| !matches!(s, "file_share" | "thread_broadcast"))
        || event.get("bot_id").is_some_and(|b| !b.is_null())
    {
        return None;
    }
    let me = &shared.me;
    let user = json_text(event.get("user"));
    if user.is_empty() || user == me.id {
        return None;
    }
    let channel = json_text(event.get("channel"));
    let raw = event.get("text").and_then(Value::as_str).unwrap_or("");
    let mention = format!("<@{}>", me.id);
    let mentioned = kind == "app_mention" || !me.id.is_empty() && raw.contains(&mention);
    let channel_type = event
        .get("channel_type")
        .and_then(Value::as_str)
        .unwrap_or(if channel.starts_with('D') { "im" } else { "" });
    let one_to_one = channel_type == "im";
    let dm_like = one_to_one || channel_type == "mpim";
    let ts = json_text(event.get("ts"));
    let event_thread = event
        .get("thread_ts")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    let thread = if dm_like {
        event_thread
            .clone()
            .or_else(|| threading.dm_threads.then(|| ts.clone()))
    } else {
        match &event_thread {
            Some(t) if *t != ts => Some(t.clone()),
            _ => threading.reply_in_thread.then(|| ts.clone()),
        }
    };
    let in_our_thread = event_thread
        .as_ref()
        .is_some_and(|t| shared.threads.contains(&(channel.clone(), t.clone())));
    let name = shared
        .names
        .get(&user)
        .cloned()
        .unwrap_or_else(|| user.clone());
    Some(Incoming {
        key: format!("{channel}:{ts}"),
        chat: ChatRef {
            id: channel,
            kind: if one_to_one {
                ChatKind::Dm
            } else {
                ChatKind::Group
            },
            thread_id: thread,
            name: None,
        },
        sender: Sender { id: user, name },
        text: unescape(raw.replace(&mention, "").trim()),
        addressed: one_to_one || mentioned || in_our_thread,
        button_press: None,
        attachments: Vec::new(),
    })
}

/// A `block_actions` button press as an [`Incoming`].
pub(super) fn parse_action(payload: &Value) -> Option<Incoming> {
    if payload.get("type").and_then(Value::as_str) != Some("block_actions") {
        return None;
    }
    let action = payload.get("actions")?.as_array()?.first()?;
    let channel = json_text(payload.pointer("/channel/id"));
    let thread = payload
        .pointer("/message/thread_ts")
        .or_else(|| payload.pointer("/container/thread_ts"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let user = payload.get("user")?;
    let trigger = json_text(payload.get("trigger_id"));
    Some(Incoming {
        key: format!(
            "a:{}:{}:{trigger}",
            json_text(payload.pointer("/container/message_ts")),
            json_text(action.get("action_ts"))
        ),
        chat: ChatRef {
            kind: if channel.starts_with('D') {
                ChatKind::Dm
            } else {
                ChatKind::Group
            },
            id: channel,
            thread_id: thread,
            name: None,
        },
        sender: Sender {
            id: json_text(user.get("id")),
            name: user
                .get("username")
                .or_else(|| user.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        },
        text: json_text(action.get("value")),
        addressed: true,
        button_press: Some(trigger),
        attachments: Vec::new(),
    })
}

/// A slash command (`/hermes stop`, or a native `/stop`) as a message in the
/// thread its sender last wrote in.
pub(super) fn parse_slash(payload: &Value, envelope: &str, shared: &Shared) -> Option<Incoming> {
    let command = json_text(payload.get("command"));
    let args = json_text(payload.get("text")).trim().to_owned();
    let name = command.trim_start_matches('/');
    let line = if name.is_empty() || name == "hermes" {
        match args.split_whitespace().next() {
            None => "/help".to_owned(),
            Some(first)
                if first
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
                    && super::super::commands::is_command(first) =>
            {
                format!("/{args}")
            }
            Some(_) => args,
        }
    } else {
        format!("/{name} {args}").trim().to_owned()
    };
    let channel = json_text(payload.get("channel_id"));
    let user = json_text(payload.get("user_id"));
    if channel.is_empty() || user.is_empty() {
        return None;
    }
    let thread = shared
        .last_thread
        .get(&(channel.clone(), user.clone()))
        .cloned();
    let name = shared
        .names
        .get(&user)
        .cloned()
        .or_else(|| {
            payload
                .get("user_name")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| user.clone());
    Some(Incoming {
        key: format!("slash:{envelope}"),
        chat: ChatRef {
            kind: if channel.starts_with('D') {
                ChatKind::Dm
            } else {
                ChatKind::Group
            },
            id: channel,
            thread_id: thread,
            name: None,
        },
        sender: Sender { id: user, name },
        text: line,
        addressed: true,
        button_press: None,
        attachments: Vec::new(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shared() -> Shared {
        Shared {
            me: BotIdentity {
                id: "UBOT".into(),
                username: "hermes".into(),
            },
            ..Shared::default()
        }
    }

    const THREADS: Threading = Threading {
        reply_in_thread: true,
        dm_threads: true,
    };

    #[test]
    fn channel_messages_are_threaded_and_mentions_stripped() {
        let me = shared();
        let e = json!({"type": "app_mention", "channel": "C1", "user": "U1", "text": "<@UBOT> hi &amp; <https://x.io|x>", "ts": "1.2"});
        let m = parse_event(&e, &me, THREADS).unwrap();
        assert_eq!(m.text, "hi & x (https://x.io)");
        assert_eq!(m.chat.thread_id.as_deref(), Some("1.2"));
        assert!(m.addressed);
        let bot = json!({"type": "message", "channel": "C1", "user": "U2", "bot_id": "B1", "text": "x", "ts": "1.4"});
        assert!(parse_event(&bot, &me, THREADS).is_none());
        let flat = Threading {
            reply_in_thread: false,
            dm_threads: true,
        };
        let plain =
            json!({"type": "message", "channel": "C1", "user": "U1", "text": "chat", "ts": "1.5"});
        let m = parse_event(&plain, &me, flat).unwrap();
        assert_eq!(m.chat.thread_id, None);
        assert!(!m.addressed);
    }

    #[test]
    fn each_top_level_dm_is_its_own_thread_unless_configured() {
        let me = shared();
        let dm = json!({"type": "message", "channel": "D1", "channel_type": "im", "user": "U1", "text": "yo", "ts": "1.3"});
        let m = parse_event(&dm, &me, THREADS).unwrap();
        assert_eq!(m.chat.kind, ChatKind::Dm);
        assert_eq!(m.chat.thread_id.as_deref(), Some("1.3"));
        let one = Threading {
            reply_in_thread: true,
            dm_threads: false,
        };
        assert_eq!(parse_event(&dm, &me, one).unwrap().chat.thread_id, None);
        let group_dm = json!({"type": "message", "channel": "G1", "channel_type": "mpim", "user": "U1", "text": "hey", "ts": "1.6"});
        let m = parse_event(&group_dm, &me, THREADS).unwrap();
        assert_eq!(m.chat.kind, ChatKind::Group);
        assert!(!m.addressed, "a group DM needs a mention");
    }

    #[test]
    fn replies_in_a_thread_the_bot_is_in_need_no_mention() {
        let mut me = shared();
        me.threads.insert(("C1".into(), "1.2".into()));
        let reply = json!({"type": "message", "channel": "C1", "user": "U1", "text": "and then?", "ts": "1.9", "thread_ts": "1.2"});
        let m = parse_event(&reply, &me, THREADS).unwrap();
        assert!(m.addressed);
        assert_eq!(m.chat.thread_id.as_deref(), Some("1.2"));
        let elsewhere = json!({"type": "message", "channel": "C1", "user": "U1", "text": "x", "ts": "2.1", "thread_ts": "2.0"});
        assert!(!parse_event(&elsewhere, &me, THREADS).unwrap().addressed);
    }

    #[test]
    fn slash_commands_go_to_the_senders_thread() {
        let mut me = shared();
        me.last_thread
            .insert(("D1".into(), "U1".into()), "5.5".into());
        let p = json!({"command": "/hermes", "text": "stop", "channel_id": "D1", "user_id": "U1", "user_name": "ann"});
        let m = parse_slash(&p, "env1", &me).unwrap();
        assert_eq!(m.text, "/stop");
        assert_eq!(m.chat.thread_id.as_deref(), Some("5.5"));
        assert_eq!(m.key, "slash:env1");
        let q = json!({"command": "/hermes", "text": "what is up", "channel_id": "C9", "user_id": "U1"});
        assert_eq!(parse_slash(&q, "e", &me).unwrap().text, "what is up");
        let native =
            json!({"command": "/approve", "text": "session", "channel_id": "D1", "user_id": "U1"});
        assert_eq!(
            parse_slash(&native, "e", &me).unwrap().text,
            "/approve session"
        );
    }
}
