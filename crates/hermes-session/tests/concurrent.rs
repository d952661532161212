//! Many conversations in one process against the mock: each runs a tool and
//! answers, and every transcript in state.db is complete and its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use futures_util::future::join_all;
use hermes_protocol::Role;
use hermes_state::ListFilter;
use support::{Sandbox, final_text, turn, write_then_answer};

const SESSIONS: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_conversations_at_once_keep_complete_separate_transcripts() {
    let sb = Sandbox::new();
    sb.mock.respond_with(write_then_answer);
    let manager = sb.manager();
    let runs = (0..SESSIONS).map(|i| {
        let manager = manager.clone();
        let spec = sb.spec();
        async move {
            let marker = format!("task-{i:03}");
            let mut conv = manager.start(spec).await.unwrap();
            let id = conv.info().session_id;
            let events = turn(&mut conv, &marker).await;
            conv.shutdown("test_close").await.unwrap();
            (marker, id, final_text(&events))
        }
    });
    let results = join_all(runs).await;
    let db = sb.db();
    let mut ids: Vec<&str> = results.iter().map(|(_, id, _)| id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(
        ids.len(),
        SESSIONS,
        "every conversation has its own session"
    );
    for (marker, id, answer) in &results {
        assert_eq!(answer, &format!("done {marker}"));
        let written = std::fs::read_to_string(sb.work().join(format!("out/{marker}.txt"))).unwrap();
        assert_eq!(&written, marker);
        let row = db.get_session(id).unwrap().unwrap();
        assert_eq!(row.source, "test");
        assert_eq!(row.end_reason.as_deref(), Some("test_close"));
        assert_eq!(row.api_call_count, 2, "{id}");
        assert_eq!(row.tool_call_count, 1, "{id}");
        let messages = db.conversation(id).unwrap();
        let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            vec![Role::User, Role::Assistant, Role::Tool, Role::Assistant],
            "{id}"
        );
        assert_eq!(messages[0].text(), marker);
        assert!(
            messages[1].tool_calls[0]
                .function
                .arguments
                .contains(marker.as_str())
        );
        assert!(
            messages[2].text().contains(&format!("{marker}.txt")),
            "{}",
            messages[2].text()
        );
        assert_eq!(messages[3].text(), format!("done {marker}"));
        // Nothing of another conversation leaked in.
        for m in &messages {
            let text = format!("{} {:?}", m.text(), m.tool_calls);
            let others = results
                .iter()
                .filter(|(other, ..)| other != marker && text.contains(other.as_str()))
                .count();
            assert_eq!(others, 0, "{id} mentions another task: {text}");
        }
    }
    let listed = db
        .list_sessions(&ListFilter {
            source: Some("test".into()),
            limit: 1000,
            ..ListFilter::default()
        })
        .unwrap();
    assert_eq!(listed.len(), SESSIONS);
    assert_eq!(sb.mock.chat_requests().len(), 2 * SESSIONS);
}
