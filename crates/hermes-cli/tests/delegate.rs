//! `delegate_task` through the real binary: a batch of two children runs
//! concurrently against the mock, each without the blocked tools, stored as
//! sessions linked to the parent, and only their summaries reach the parent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use hermes_state::session_db::{ListFilter, SessionDb};
use serde_json::{Value, json};
use support::*;

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_batch_of_two_children_runs_concurrently_and_returns_only_summaries() {
    let sb = Sandbox::start();
    sb.no_retries();
    let tasks = json!({"tasks": [
        {"goal": "TASK-A: say alpha in the shell"},
        {"goal": "TASK-B: say beta in the shell", "context": "use echo"}
    ]});
    sb.mock.push(Reply::tool_call(
        "call_d",
        "delegate_task",
        &tasks.to_string(),
    ));
    // Each child's script is reserved for requests carrying its goal, so the
    // replies reach the right child whichever asks first.
    sb.mock.push_all([
        // The pause only keeps a slow machine from finishing child A's whole
        // round before child B's first request has been written.
        Reply::tool_call("a1", "terminal", r#"{"command": "echo alpha-output"}"#)
            .for_request_containing("TASK-A")
            .with_delay(std::time::Duration::from_millis(300)),
        Reply::tool_call("b1", "terminal", r#"{"command": "echo beta-output"}"#)
            .for_request_containing("TASK-B")
            .with_delay(std::time::Duration::from_millis(300)),
        Reply::text("Summary A: printed alpha.").for_request_containing("TASK-A"),
        Reply::text("Summary B: printed beta.").for_request_containing("TASK-B"),
        Reply::text("Both subagents are done.").for_request_containing("total_duration_seconds"),
    ]);
    // Not quiet: the children's progress is drawn on stderr.
    let out = sb
        .command()
        .args(["chat", "-q", "Split this work between two helpers."])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Both subagents are done."));
    let reqs = sb.requests();
    assert_eq!(reqs.len(), 6, "{reqs:#?}");

    let parent_tools = tool_names(&reqs[0]);
    assert!(
        parent_tools.contains(&"delegate_task".to_owned()),
        "{parent_tools:?}"
    );
    let of_child = |marker: &str| -> Vec<usize> {
        (1..reqs.len() - 1)
            .filter(|&i| system_text(&reqs[i]).contains(marker))
            .collect()
    };
    let (a, b) = (of_child("TASK-A"), of_child("TASK-B"));
    assert_eq!((a.len(), b.len()), (2, 2), "{a:?} {b:?}");
    // Concurrent, not one after the other: both children's first calls come
    // before either child's second.
    assert!(a[0].max(b[0]) < a[1].min(b[1]), "A {a:?} B {b:?}");
    for i in a.iter().chain(&b) {
        let names = tool_names(&reqs[*i]);
        assert!(names.contains(&"terminal".to_owned()), "{names:?}");
        for blocked in ["delegate_task", "clarify", "memory", "execute_code"] {
            assert!(
                !names.contains(&blocked.to_owned()),
                "{blocked} offered: {names:?}"
            );
        }
        // A child starts fresh: its goal is the only user message.
        assert_eq!(messages_with_role(&reqs[*i], "user").len(), 1);
    }
    assert!(system_text(&reqs[b[0]]).contains("use echo"));

    // The parent sees one tool result with both summaries and nothing else
    // the children did.
    let last = &reqs[5];
    let results = messages_with_role(last, "tool");
    assert_eq!(results.len(), 1);
    let report = tool_content(results[0]);
    let entries = report["results"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["task_index"], 0);
    assert_eq!(entries[0]["status"], "completed");
    assert_eq!(entries[0]["summary"], "Summary A: printed alpha.");
    assert_eq!(entries[1]["summary"], "Summary B: printed beta.");
    assert_eq!(entries[1]["api_calls"], 2);
    assert_eq!(entries[0]["tool_trace"][0]["tool"], "terminal");
    assert_eq!(entries[0]["tool_trace"][0]["status"], "ok");
    let parent_text = last["messages"].to_string();
    assert!(
        !parent_text.contains("alpha-output"),
        "child output leaked: {parent_text}"
    );

    // Progress reached the front-end as nested lines.
    let err = stderr(&out);
    assert!(err.contains("↳ subagent 1/2: 💻 terminal"), "{err}");
    assert!(err.contains("✓ [2/2] TASK-B"), "{err}");

    // The children are stored sessions linked to the parent, and closed.
    let db = SessionDb::open_read_only(&sb.home.path().join("state.db")).unwrap();
    let all = db
        .list_sessions(&ListFilter {
            include_children: true,
            ..ListFilter::default()
        })
        .unwrap();
    let parent = all.iter().find(|s| s.source == "cli").unwrap().id.clone();
    let children: Vec<_> = all
        .iter()
        .filter(|s| s.parent_session_id.as_deref() == Some(parent.as_str()))
        .collect();
    assert_eq!(children.len(), 2, "{children:?}");
    for child in &children {
        assert_eq!(child.source, "subagent");
        let row = db.get_session(&child.id).unwrap().unwrap();
        assert_eq!(row.end_reason.as_deref(), Some("agent_close"));
        let tool_rows = db
            .messages(&child.id)
            .unwrap()
            .into_iter()
            .filter(|m| m.role == "tool" && m.tool_name.as_deref() == Some("terminal"))
            .count();
        assert_eq!(
            tool_rows, 1,
            "child {} should keep its own terminal call",
            child.id
        );
    }
    // Subagent runs stay out of `sessions list` and go with their parent.
    let listed = sb.command().args(["sessions", "list"]).output().unwrap();
    let listed = stdout(&listed);
    assert!(listed.contains(&parent), "{listed}");
    for child in &children {
        assert!(!listed.contains(&child.id), "{listed}");
    }
    let ids: Vec<String> = children.iter().map(|c| c.id.clone()).collect();
    drop(db);
    let deleted = sb
        .command()
        .args(["sessions", "delete", &parent, "--yes"])
        .output()
        .unwrap();
    assert!(deleted.status.success(), "{}", stderr(&deleted));
    let db = SessionDb::open_read_only(&sb.home.path().join("state.db")).unwrap();
    for id in &ids {
        assert!(
            db.get_session(id).unwrap().is_none(),
            "{id} outlived its parent"
        );
    }
}

#[test]
fn too_many_tasks_and_missing_goals_get_the_reference_errors() {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config("delegation:\n  max_concurrent_children: 1\n");
    let two = json!({"tasks": [{"goal": "one"}, {"goal": "two"}]});
    sb.mock.push_all([
        Reply::tool_call("c1", "delegate_task", &two.to_string()),
        Reply::tool_call("c2", "delegate_task", r#"{"context": "no goal"}"#),
        Reply::text("ok"),
    ]);
    let out = sb.chat("Delegate.", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = sb.requests();
    assert_eq!(reqs.len(), 3, "no child may have been started");
    let description = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "delegate_task")
        .map(|t| t["function"]["description"].as_str().unwrap().to_owned())
        .unwrap();
    assert!(description.contains("up to 1 subagents"), "{description}");
    let first = tool_content(messages_with_role(&reqs[1], "tool")[0]);
    assert!(
        first["error"]
            .as_str()
            .unwrap()
            .starts_with("Too many tasks: 2 provided, but max_concurrent_children is 1."),
        "{first}"
    );
    let second = tool_content(messages_with_role(&reqs[2], "tool")[1]);
    assert_eq!(
        second["error"],
        "Provide either 'goal' (single task) or 'tasks' (batch)."
    );
}

#[test]
fn delegation_base_url_and_model_send_children_elsewhere() {
    let sb = Sandbox::start();
    sb.no_retries();
    let cheap = hermes_mock::MockServer::start();
    sb.add_config(&format!(
        "delegation:\n  base_url: {}\n  model: cheap-model\n  api_key: sk-delegation-test\n",
        cheap.base_url()
    ));
    sb.mock.push(Reply::tool_call(
        "d1",
        "delegate_task",
        r#"{"goal": "Summarise the README"}"#,
    ));
    cheap.push(Reply::text("The README is short."));
    sb.mock.push(Reply::text("Done."));
    let out = sb.chat("Delegate a summary.", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let parent = sb.requests();
    assert_eq!(
        parent.len(),
        2,
        "the parent's calls stay on its own endpoint"
    );
    assert_eq!(parent[0]["model"], "mock-model");
    let child = cheap.chat_requests();
    assert_eq!(child.len(), 1);
    assert_eq!(child[0]["model"], "cheap-model");
    let auth = cheap.requests()[0]
        .header("authorization")
        .unwrap()
        .to_owned();
    assert_eq!(auth, "Bearer sk-delegation-test");
    let report = tool_content(messages_with_role(&parent[1], "tool")[0]);
    assert_eq!(report["results"][0]["summary"], "The README is short.");
    assert_eq!(report["results"][0]["model"], "cheap-model");
}

#[test]
fn a_broken_delegation_provider_is_reported_by_the_tool_not_at_start() {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config("delegation:\n  provider: no-such-provider\n");
    sb.mock.push(Reply::tool_call(
        "d1",
        "delegate_task",
        r#"{"goal": "anything"}"#,
    ));
    sb.mock.push(Reply::text("Could not delegate."));
    let out = sb.chat("Delegate.", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = sb.requests();
    let error = tool_content(messages_with_role(&reqs[1], "tool")[0]);
    let text = error["error"].as_str().unwrap();
    assert!(text.contains("no-such-provider"), "{text}");
    assert!(
        text.contains("delegation: section of config.yaml"),
        "{text}"
    );
}

/// A child proposes `rm -rf scratch` in the working directory; returns whether
/// the directory survived and the child's tool result.
fn child_proposes_a_recursive_delete(auto_approve: bool) -> (bool, String) {
    let sb = Sandbox::start();
    sb.no_retries();
    if auto_approve {
        sb.add_config("delegation:\n  subagent_auto_approve: true\n");
    }
    std::fs::create_dir_all(sb.work_path("scratch/deep")).unwrap();
    sb.mock.push(Reply::tool_call(
        "d1",
        "delegate_task",
        r#"{"goal": "TASK-CLEAN: remove the scratch directory"}"#,
    ));
    sb.mock.push_all([
        Reply::tool_call("t1", "terminal", r#"{"command": "rm -rf scratch"}"#)
            .for_request_containing("TASK-CLEAN"),
        Reply::text("tried").for_request_containing("TASK-CLEAN"),
        Reply::text("ok").for_request_containing("total_duration_seconds"),
    ]);
    let out = sb.chat("Clean up.", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let child_second = sb
        .mock
        .chat_requests()
        .into_iter()
        .filter(|r| r.to_string().contains("TASK-CLEAN") && !r.to_string().contains("Clean up."))
        .nth(1)
        .unwrap();
    let result = messages_with_role(&child_second, "tool")[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    (sb.work_path("scratch").exists(), result)
}

#[test]
fn children_never_ask_for_approval_and_refuse_unless_configured() {
    let (survived, result) = child_proposes_a_recursive_delete(false);
    assert!(
        survived,
        "a child's dangerous command is refused by default"
    );
    assert!(
        result.contains("blocked") || result.contains("BLOCKED"),
        "{result}"
    );
    let (survived, result) = child_proposes_a_recursive_delete(true);
    assert!(!survived, "subagent_auto_approve lets it run: {result}");
}
