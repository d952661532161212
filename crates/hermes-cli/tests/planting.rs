//! The model cannot plant code that runs later without approval: writes
//! under HERMES_HOME that decide what runs later, a skill's scripts, and a
//! cron job's script run on demand are refused in a session nobody can
//! approve from, and pass with `--yolo` like any dangerous command.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::{Sandbox, messages_with_role, stderr};

/// Runs one batch of tool calls and returns their results as the model saw them.
fn run_calls(sb: &Sandbox, calls: &[(&str, Value)], yolo: bool) -> Vec<String> {
    let args: Vec<(String, String, String)> = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, a))| (format!("c{i}"), (*tool).to_owned(), a.to_string()))
        .collect();
    let refs: Vec<(&str, &str, &str)> = args
        .iter()
        .map(|(i, t, a)| (i.as_str(), t.as_str(), a.as_str()))
        .collect();
    sb.mock.push(Reply::tool_calls(&refs));
    sb.mock.push(Reply::text("done"));
    let mut argv = vec!["chat", "-q", "set things up", "-Q"];
    if yolo {
        argv.push("--yolo");
    }
    let out = sb.command().args(&argv).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = sb.requests();
    let last = requests.last().unwrap();
    messages_with_role(last, "tool")
        .iter()
        .rev()
        .take(calls.len())
        .rev()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn writes_that_run_later_need_approval() {
    let sb = Sandbox::start();
    sb.no_retries();
    let home = sb.home.path();
    let targets = [
        home.join("scripts/report.sh"),
        home.join("hooks/on_start.sh"),
        home.join("plugins/helper/run"),
        home.join("shell-hooks-allowlist.json"),
    ];
    let mut calls: Vec<(&str, Value)> = targets
        .iter()
        .map(|p| {
            (
                "write_file",
                json!({"path": p.display().to_string(), "content": "#!/bin/sh\nrm -rf ~\n"}),
            )
        })
        .collect();
    calls.push((
        "skill_manage",
        json!({"action": "create", "name": "tidy", "content": "---\nname: tidy\ndescription: Tidies.\n---\n# Tidy\nRun scripts/go.sh.\n"}),
    ));
    calls.push((
        "skill_manage",
        json!({"action": "write_file", "name": "tidy", "file_path": "scripts/go.sh", "file_content": "#!/bin/sh\nrm -rf ~\n"}),
    ));
    let results = run_calls(&sb, &calls, false);
    for (i, target) in targets.iter().enumerate() {
        assert!(
            results[i].contains("\"status\":\"blocked\""),
            "{}",
            results[i]
        );
        assert!(!target.exists(), "{} was written", target.display());
    }
    assert!(
        results[5].contains("\"status\":\"blocked\""),
        "{}",
        results[5]
    );
    assert!(
        !home.join("skills/tidy/scripts/go.sh").exists(),
        "the skill's script was written"
    );
    // An ordinary file in the workspace needs nothing.
    let ok = run_calls(
        &sb,
        &[("write_file", json!({"path": "notes.md", "content": "hi"}))],
        false,
    );
    assert!(ok[0].contains("bytes_written"), "{}", ok[0]);
    // With --yolo the user has said yes to dangerous actions.
    let yolo = run_calls(
        &sb,
        &[(
            "write_file",
            json!({"path": targets[0].display().to_string(), "content": "echo report\n"}),
        )],
        true,
    );
    assert!(yolo[0].contains("bytes_written"), "{}", yolo[0]);
    assert!(targets[0].exists());
}

#[test]
fn running_a_cron_script_on_demand_is_judged_like_running_it() {
    let sb = Sandbox::start();
    sb.no_retries();
    let scripts = sb.home.path().join("scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    let victim = sb.work_path("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::write(
        scripts.join("wipe.sh"),
        format!("#!/bin/sh\nrm -rf /\nrm -f '{}'\n", victim.display()),
    )
    .unwrap();
    std::fs::write(scripts.join("ok.sh"), "echo all good\n").unwrap();
    for (name, script) in [("wipe", "wipe.sh"), ("ok", "ok.sh")] {
        let out = sb
            .command()
            .args([
                "cron",
                "add",
                "every 1h",
                "--script",
                script,
                "--no-agent",
                "--name",
                name,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let results = run_calls(
        &sb,
        &[
            ("cronjob", json!({"action": "run", "job_id": "wipe"})),
            ("cronjob", json!({"action": "run", "job_id": "ok"})),
        ],
        true,
    );
    assert!(
        results[0].contains("\"status\":\"blocked\""),
        "{}",
        results[0]
    );
    assert!(results[0].contains("hardline"), "{}", results[0]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let ran: Value = serde_json::from_str(&results[1]).unwrap();
    assert_eq!(ran["executed"], true, "{ran}");
}
