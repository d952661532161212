//! Skills through the real binary: a skill created with `skill_manage` in one
//! session is listed in the next session's system prompt and loads with `skill_view`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::*;

fn system_prompt(body: &Value) -> String {
    messages_with_role(body, "system")[0]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

const SKILL: &str = "---\nname: brew-tea\ndescription: How the user likes tea brewed\n---\n# Brew tea\n\n1. Boil water to 80C.\n2. Steep green tea for 2 minutes.\n";

#[test]
fn a_created_skill_is_indexed_and_viewable_in_the_next_session() {
    let sb = Sandbox::start();
    let args =
        json!({"action": "create", "name": "brew-tea", "category": "home", "content": SKILL});
    sb.mock.push(Reply::tool_call(
        "call_1",
        "skill_manage",
        &args.to_string(),
    ));
    sb.mock.push(Reply::text("Saved."));
    let first = sb.chat("Remember how I brew tea.", &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    let reqs = sb.requests();
    assert_eq!(reqs.len(), 2);
    let result = tool_content(messages_with_role(&reqs[1], "tool")[0]);
    assert_eq!(result["success"], true, "{result}");
    assert!(
        sb.home
            .path()
            .join("skills/home/brew-tea/SKILL.md")
            .is_file()
    );
    // Session 1's prompt was built before the skill existed.
    assert!(!system_prompt(&reqs[0]).contains("brew-tea"));

    sb.mock.push(Reply::tool_call(
        "call_2",
        "skill_view",
        r#"{"name": "brew-tea"}"#,
    ));
    sb.mock.push(Reply::text("80C, two minutes."));
    let second = sb.chat("How do I brew tea?", &[]);
    assert!(second.status.success(), "{}", stderr(&second));
    let reqs = sb.requests();
    let prompt = system_prompt(&reqs[2]);
    assert!(
        prompt.contains("brew-tea") && prompt.contains("How the user likes tea brewed"),
        "{prompt}"
    );
    let viewed = tool_content(messages_with_role(&reqs[3], "tool")[0]);
    assert_eq!(viewed["success"], true, "{viewed}");
    assert!(
        viewed["content"]
            .as_str()
            .unwrap()
            .contains("Steep green tea")
    );
}

#[test]
fn skills_subcommands_list_create_show_delete() {
    let sb = Sandbox::start();
    let run = |args: &[&str]| {
        let out = sb.command().arg("skills").args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    // Bundled skills are seeded on first use, with a manifest.
    let list = run(&["list"]);
    assert!(
        list.contains("commit-messages") && list.contains("builtin"),
        "{list}"
    );
    let manifest =
        std::fs::read_to_string(sb.home.path().join("skills/.bundled_manifest")).unwrap();
    assert!(manifest.contains("meeting-notes:"), "{manifest}");

    let created = run(&[
        "create",
        "my-flow",
        "-d",
        "My own flow",
        "--category",
        "work",
    ]);
    assert!(created.contains("Created skill 'my-flow'"), "{created}");
    let local = run(&["list", "--source", "local"]);
    assert!(
        local.contains("my-flow") && !local.contains("commit-messages"),
        "{local}"
    );
    let shown = run(&["show", "meeting-notes"]);
    assert!(
        shown.contains("# Meeting notes") && shown.contains("templates/notes.md"),
        "{shown}"
    );
    sb.add_config("skills:\n  disabled: [meeting-notes]\n");
    let list = run(&["list"]);
    assert!(
        list.lines()
            .any(|l| l.starts_with("meeting-notes") && l.contains("disabled")),
        "{list}"
    );
    assert!(!run(&["list", "--enabled-only"]).contains("meeting-notes"));
    run(&["delete", "my-flow"]);
    assert!(!sb.home.path().join("skills/work/my-flow").exists());
    let bad = sb
        .command()
        .args(["skills", "show", "nope"])
        .output()
        .unwrap();
    assert!(!bad.status.success());

    // A user edit to a bundled skill survives the next sync.
    let md = sb
        .home
        .path()
        .join("skills/software-development/commit-messages/SKILL.md");
    let edited = std::fs::read_to_string(&md)
        .unwrap()
        .replace("# Commit messages", "# Mine");
    std::fs::write(&md, &edited).unwrap();
    run(&["list"]);
    assert_eq!(std::fs::read_to_string(&md).unwrap(), edited);
}

#[test]
fn dash_s_preloads_skills_into_the_first_user_message() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("ok"));
    let out = sb.chat("Commit my work.", &["-s", "commit-messages,nope"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("unknown skill(s): nope"));
    let reqs = sb.requests();
    let user = messages_with_role(&reqs[0], "user")[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(user.starts_with("[IMPORTANT:"), "{user}");
    assert!(
        user.contains("\"commit-messages\" skill preloaded"),
        "{user}"
    );
    assert!(user.contains("# Commit messages"), "{user}");
    assert!(user.ends_with("Commit my work."), "{user}");
    assert!(!system_prompt(&reqs[0]).contains("# Commit messages"));

    // The top-level flag works too, with -z (the reference's `hermes -s NAME -z PROMPT`).
    sb.mock.push(Reply::text("done"));
    let top = sb
        .command()
        .args(["-s", "commit-messages", "-z", "Write one."])
        .output()
        .unwrap();
    assert!(top.status.success(), "{}", stderr(&top));
    assert_eq!(stdout(&top).trim(), "done");
    let last = sb.requests().pop().unwrap();
    let user = messages_with_role(&last, "user")[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        user.contains("# Commit messages") && user.ends_with("Write one."),
        "{user}"
    );

    let bad = sb.chat("hi", &["-s", "nope"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("no such skill: nope"),
        "{}",
        stderr(&bad)
    );
}
