//! Compression through the binary: a resumed session that crosses the threshold is
//! summarized by the configured auxiliary model and continues in a child session whose
//! `parent_session_id` points at the original, as the reference records it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::{MockServer, Reply};
use hermes_state::session_db::SessionDb;
use support::*;

#[test]
fn a_resumed_session_over_the_threshold_compresses_into_a_child_session() {
    let sb = Sandbox::start();
    let aux = MockServer::start();
    let base = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    // A 3 000-token window triggers at 85 % of it; summaries come from a second endpoint.
    let base = base.replace(
        "auxiliary:\n",
        &format!(
            "auxiliary:\n  compression:\n    base_url: {}\n    model: summarizer-1\n",
            aux.base_url()
        ),
    );
    let config = |enabled: bool| {
        format!(
            "{base}  context_length: 3000\ncompression:\n  enabled: {enabled}\n  protect_first_n: 1\n"
        )
    };
    let write =
        |enabled| std::fs::write(sb.home.path().join("config.yaml"), config(enabled)).unwrap();
    let long = |n: usize| {
        format!(
            "part {n}: {}",
            "the quick brown fox jumps over it ".repeat(60)
        )
    };
    write(false);
    sb.mock.push(Reply::text("noted one"));
    let first = sb.chat(&long(1), &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    let parent = session_id_of(&first);
    sb.command()
        .args(["sessions", "rename", &parent, "big job"])
        .output()
        .unwrap();
    for n in 2..=3 {
        sb.mock.push(Reply::text(format!("noted {n}")));
        let out = sb.chat(&long(n), &["--resume", &parent]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(session_id_of(&out), parent);
    }
    assert!(aux.chat_requests().is_empty());

    write(true);
    aux.push(Reply::text("## Active Task\nUser asked: 'part 4 …'"));
    sb.mock.push(Reply::text("noted four"));
    let last = sb.chat(&long(4), &["--resume", &parent]);
    assert!(last.status.success(), "{}", stderr(&last));
    assert_eq!(stdout(&last), "noted four\n");
    let child = session_id_of(&last);
    assert_ne!(child, parent, "{}", stderr(&last));

    // The summarizer saw the old turns; the main model got head + summary + tail.
    let summary_req = &aux.chat_requests()[0];
    assert_eq!(summary_req["model"], "summarizer-1");
    let prompt = summary_req["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("[ASSISTANT]: noted one"), "{prompt}");
    let bodies = sb.requests();
    let last = bodies.last().unwrap()["messages"].as_array().unwrap();
    assert!(last.iter().any(|m| {
        m["content"]
            .as_str()
            .unwrap_or("")
            .contains("CONTEXT COMPACTION")
    }));
    assert!(
        last.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("part 4")
    );

    let db = SessionDb::open_read_only(&sb.home.path().join("state.db")).unwrap();
    let p = db.get_session(&parent).unwrap().unwrap();
    let c = db.get_session(&child).unwrap().unwrap();
    assert_eq!(p.end_reason.as_deref(), Some("compression"));
    assert_eq!(c.parent_session_id.as_deref(), Some(parent.as_str()));
    assert_eq!(c.title.as_deref(), Some("big job #2"));
    let conv = db.conversation(&child).unwrap();
    assert!(conv.iter().any(|m| m.text().contains("CONTEXT COMPACTION")));
    assert_eq!(conv.last().unwrap().text(), "noted four");
    // The parent keeps its full history.
    assert!(
        db.conversation(&parent)
            .unwrap()
            .iter()
            .any(|m| m.text().starts_with("part 1"))
    );
}
