//! Session keys as the reference builds them.

use super::*;
use crate::messaging::platform::Sender;

fn message(kind: ChatKind, chat: &str, thread: Option<&str>) -> Incoming {
    Incoming {
        key: "1".into(),
        chat: ChatRef {
            id: chat.into(),
            kind,
            thread_id: thread.map(str::to_owned),
            name: None,
        },
        sender: Sender {
            id: "55".into(),
            name: "Ann".into(),
        },
        text: "hi".into(),
        addressed: false,
        button_press: None,
        attachments: Vec::new(),
    }
}

#[test]
fn session_keys_follow_the_reference() {
    let cfg = MessagingConfig::read(&serde_json::json!({}), &|_| None);
    assert_eq!(
        session_key("telegram", &message(ChatKind::Dm, "42", None), &cfg),
        "agent:main:telegram:dm:42"
    );
    assert_eq!(
        session_key("telegram", &message(ChatKind::Group, "-100123", None), &cfg),
        "agent:main:telegram:group:-100123:55"
    );
    assert_eq!(
        session_key(
            "slack",
            &message(ChatKind::Group, "C01", Some("1712.3456")),
            &cfg
        ),
        "agent:main:slack:group:C01:1712.3456"
    );
}
