//! Scheduled jobs through the binary: a `jobs.json` as the reference writes
//! it loads and runs, jobs are managed with `hermes cron`, and a run is a
//! `source = cron` session whose answer is saved under `cron/output/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::Value;
use support::{Sandbox, stderr, stdout};

/// A jobs.json written by hermes-agent 0.19.0 (`hermes cron add "every 2h"
/// "Check the news and summarize" --name "News digest"`), made due.
const REFERENCE_JOBS: &str = r#"{
  "jobs": [
    {
      "id": "f325e406d3cc",
      "name": "News digest",
      "prompt": "Check the news and summarize",
      "skills": [],
      "skill": null,
      "model": null,
      "provider": null,
      "provider_snapshot": null,
      "model_snapshot": null,
      "base_url": null,
      "script": null,
      "no_agent": false,
      "context_from": null,
      "schedule": {"kind": "interval", "minutes": 120, "display": "every 120m"},
      "schedule_display": "every 120m",
      "repeat": {"times": null, "completed": 0},
      "enabled": true,
      "state": "scheduled",
      "paused_at": null,
      "paused_reason": null,
      "created_at": "2026-11-25T11:30:39.931666+00:00",
      "next_run_at": "2020-11-25T13:30:40.052456+00:00",
      "last_run_at": null,
      "last_status": null,
      "last_error": null,
      "last_delivery_error": null,
      "deliver": "local",
      "origin": null,
      "enabled_toolsets": null,
      "workdir": null
    }
  ],
  "updated_at": "2026-11-25T11:30:40.053179+00:00"
}"#;

fn jobs(sb: &Sandbox) -> Vec<Value> {
    let text = std::fs::read_to_string(sb.home.path().join("cron/jobs.json")).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    value["jobs"].as_array().unwrap().clone()
}

#[test]
fn a_reference_jobs_file_loads_and_its_due_job_runs_on_tick() {
    let sb = Sandbox::start();
    std::fs::create_dir_all(sb.home.path().join("cron")).unwrap();
    std::fs::write(sb.home.path().join("cron/jobs.json"), REFERENCE_JOBS).unwrap();
    let listed = stdout(&sb.command().args(["cron", "list"]).output().unwrap());
    assert!(
        listed.contains("f325e406d3cc [active]") && listed.contains("every 120m"),
        "{listed}"
    );
    sb.mock.push(Reply::text("Three headlines today."));
    let out = sb.command().args(["cron", "tick"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ran News digest (f325e406d3cc): ok"),
        "{}",
        stderr(&out)
    );
    // The prompt went with the cron notice.
    let sent = sb.requests()[0].to_string();
    assert!(
        sent.contains("You are running as a scheduled cron job")
            && sent.contains("Check the news and summarize")
    );
    // The answer is saved as the reference saves it.
    let dir = sb.home.path().join("cron/output/f325e406d3cc");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.starts_with("# Cron Job: News digest\n"), "{saved}");
    assert!(
        saved.contains("## Response\n\nThree headlines today."),
        "{saved}"
    );
    // The job moved on, fields this build does not use kept.
    let job = &jobs(&sb)[0];
    assert_eq!(job["last_status"], "ok");
    assert_eq!(job["repeat"]["completed"], 1);
    assert!(job["next_run_at"].as_str().unwrap() > "2026", "{job}");
    assert_eq!(job["provider_snapshot"], Value::Null);
    assert!(job.get("context_from").is_some());
    // The run is a cron session in state.db.
    let db = rusqlite::Connection::open(sb.home.path().join("state.db")).unwrap();
    let source: String = db
        .query_row(
            "SELECT source FROM sessions WHERE id LIKE 'cron_f325e406d3cc_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(source, "cron");
    // Nothing is due any more, and the tick says so.
    let again = sb.command().args(["cron", "tick"]).output().unwrap();
    assert_eq!(stderr(&again).trim(), "No jobs are due.");
}

#[test]
fn jobs_are_added_paused_resumed_run_and_removed() {
    let sb = Sandbox::start();
    let out = sb
        .command()
        .args(["cron", "add", "30m", "Remind me to stretch"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Schedule: once in 30m"),
        "{}",
        stdout(&out)
    );
    let job = &jobs(&sb)[0];
    let id = job["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 12);
    assert_eq!(job["schedule"]["kind"], "once");
    assert_eq!(job["repeat"]["times"], 1);
    let bad = sb
        .command()
        .args(["cron", "add", "sometime", "x"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("Invalid schedule 'sometime'"));

    let paused = sb
        .command()
        .args(["cron", "pause", "Remind me to stretch"])
        .output()
        .unwrap();
    assert!(stdout(&paused).contains(&format!("Paused job: Remind me to stretch ({id})")));
    assert!(!stdout(&sb.command().args(["cron", "list"]).output().unwrap()).contains(&id));
    assert!(
        stdout(
            &sb.command()
                .args(["cron", "list", "--all"])
                .output()
                .unwrap()
        )
        .contains("[paused]")
    );
    let resumed = sb.command().args(["cron", "resume", &id]).output().unwrap();
    assert!(
        stdout(&resumed).contains("Resumed job"),
        "{}",
        stdout(&resumed)
    );

    // A one-shot run now is its one run: it is gone afterwards.
    sb.mock.push(Reply::text("Stretch now!"));
    let ran = sb.command().args(["cron", "run", &id]).output().unwrap();
    assert!(
        stdout(&ran).contains("Ran now: succeeded."),
        "{}",
        stdout(&ran)
    );
    assert!(jobs(&sb).is_empty());

    sb.command()
        .args(["cron", "add", "every 2h", "Check CI"])
        .output()
        .unwrap();
    let id = jobs(&sb)[0]["id"].as_str().unwrap().to_owned();
    let removed = sb.command().args(["cron", "rm", &id]).output().unwrap();
    assert!(
        stdout(&removed).contains("Removed job: Check CI"),
        "{}",
        stdout(&removed)
    );
    let missing = sb.command().args(["cron", "rm", &id]).output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
    let status = stdout(&sb.command().args(["cron", "status"]).output().unwrap());
    assert!(
        status.contains("Gateway is not running") && status.contains("0 active job(s)"),
        "{status}"
    );
}

#[test]
fn two_processes_ticking_at_once_run_a_due_job_once() {
    let sb = Sandbox::start();
    std::fs::create_dir_all(sb.home.path().join("cron")).unwrap();
    std::fs::write(sb.home.path().join("cron/jobs.json"), REFERENCE_JOBS).unwrap();
    sb.mock.respond_with(|_| {
        Some(Reply::text("only once").with_delay(std::time::Duration::from_millis(400)))
    });
    let first = sb.command().args(["cron", "tick"]).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let second = sb.command().args(["cron", "tick"]).output().unwrap();
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success() && second.status.success());
    assert_eq!(sb.requests().len(), 1, "the job ran twice");
    assert_eq!(jobs(&sb)[0]["repeat"]["completed"], 1);
}

#[test]
fn the_model_schedules_a_job_with_cronjob_and_the_scheduler_runs_it() {
    let sb = Sandbox::start();
    // A moment ago: due at the next tick, still within the one-shot grace.
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
        - 30;
    let when = hermes_session::cron::schedule::iso(secs);
    let args = serde_json::json!({
        "action": "create",
        "schedule": when,
        "prompt": "Summarise the disk usage of /tmp",
        "name": "Disk report",
    });
    sb.mock
        .push(Reply::tool_call("c1", "cronjob", &args.to_string()));
    sb.mock
        .push(Reply::tool_call("c2", "cronjob", r#"{"action":"list"}"#));
    sb.mock.push(Reply::text("Scheduled."));
    let out = sb.chat("every so often, report the disk usage", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = sb.requests();
    let tools: Vec<Value> = requests.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(tools[0]["success"], true, "{}", tools[0]);
    assert_eq!(tools[0]["message"], "Cron job 'Disk report' created.");
    assert_eq!(tools[1]["count"], 1);
    let id = tools[0]["job_id"].as_str().unwrap().to_owned();
    assert_eq!(jobs(&sb)[0]["id"], id.as_str());

    sb.mock.push(Reply::text("/tmp holds 12 MB."));
    let tick = sb.command().args(["cron", "tick"]).output().unwrap();
    assert!(
        stderr(&tick).contains(&format!("ran Disk report ({id}): ok")),
        "{}",
        stderr(&tick)
    );
    // A cron run is not offered cronjob itself.
    let run_request = sb.requests().last().unwrap().clone();
    let offered = support::tool_names(&run_request);
    assert!(!offered.iter().any(|n| n == "cronjob"), "{offered:?}");
    // The one-shot is done and gone; its answer stays.
    assert!(jobs(&sb).is_empty());
    assert!(sb.home.path().join("cron/output").join(&id).is_dir());
}

#[test]
fn a_missing_script_and_attach_to_session_are_refused_not_stored() {
    let sb = Sandbox::start();
    let missing = serde_json::json!({
        "action": "create", "schedule": "every 1h", "prompt": "x", "script": "report.py",
    });
    let attach = serde_json::json!({
        "action": "create", "schedule": "every 1h", "prompt": "x", "attach_to_session": true,
    });
    sb.mock.push_all([
        Reply::tool_call("c1", "cronjob", &missing.to_string()),
        Reply::tool_call("c2", "cronjob", &attach.to_string()),
        Reply::text("ok"),
    ]);
    sb.chat("schedule it", &[]);
    let requests = sb.requests();
    let after_first = requests[1].to_string();
    assert!(after_first.contains("Script not found"), "{after_first}");
    let after_second = requests[2].to_string();
    assert!(
        after_second.contains("attach_to_session is not supported"),
        "{after_second}"
    );
    let jobs = std::fs::read_to_string(sb.home.path().join("cron/jobs.json")).unwrap_or_default();
    assert!(!jobs.contains("report.py"), "{jobs}");
}

fn cron(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let out = sb.command().arg("cron").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "cron {args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    out
}

fn latest_output(sb: &Sandbox, id: &str) -> String {
    let dir = sb.home.path().join("cron/output").join(id);
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    std::fs::read_to_string(files.last().unwrap()).unwrap()
}

fn job_id(sb: &Sandbox, name: &str) -> String {
    jobs(sb).into_iter().find(|j| j["name"] == name).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_script_is_the_whole_job_with_no_agent_and_its_gate_can_silence_it() {
    let sb = Sandbox::start();
    let scripts = sb.home.path().join("scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::write(scripts.join("disk.sh"), "echo \"disk at 91%\"\n").unwrap();
    cron(
        &sb,
        &[
            "add",
            "every 1h",
            "--script",
            "disk.sh",
            "--no-agent",
            "--name",
            "disk",
        ],
    );
    let ran = cron(&sb, &["run", "disk"]);
    assert!(stdout(&ran).contains("succeeded"), "{}", stdout(&ran));
    assert!(latest_output(&sb, &job_id(&sb, "disk")).contains("disk at 91%"));
    assert!(sb.mock.chat_requests().is_empty(), "no model was asked");
    // The last line can say there is nothing to report.
    std::fs::write(
        scripts.join("disk.sh"),
        "echo checked\necho '{\"wakeAgent\": false}'\n",
    )
    .unwrap();
    cron(&sb, &["run", "disk"]);
    assert!(sb.mock.chat_requests().is_empty());
    // A failing script fails the run and says why.
    std::fs::write(scripts.join("disk.sh"), "echo 'df: broken' >&2; exit 2\n").unwrap();
    let out = sb.command().args(["cron", "run", "disk"]).output().unwrap();
    assert!(
        stdout(&out).contains("Script exited with code 2"),
        "{}",
        stdout(&out)
    );
    let job = jobs(&sb).into_iter().find(|j| j["name"] == "disk").unwrap();
    assert_eq!(job["last_status"], "error");
    // Scripts live in HERMES_HOME/scripts only.
    std::fs::write(sb.home.path().join("evil.sh"), "echo no").unwrap();
    let refused = sb
        .command()
        .args([
            "cron",
            "add",
            "every 1h",
            "--script",
            "../evil.sh",
            "--no-agent",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("outside the scripts directory"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn a_scripts_output_and_an_earlier_jobs_output_feed_the_prompt_and_jobs_can_be_edited() {
    let sb = Sandbox::start();
    let scripts = sb.home.path().join("scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::write(scripts.join("issues.py"), "print('42 open issues')\n").unwrap();
    cron(
        &sb,
        &["add", "every 1h", "Count the issues.", "--name", "first"],
    );
    sb.mock.push(Reply::text("There were 40 yesterday."));
    cron(&sb, &["run", "first"]);
    let first = job_id(&sb, "first");
    cron(
        &sb,
        &[
            "add",
            "every 1h",
            "Compare with yesterday.",
            "--script",
            "issues.py",
            "--name",
            "trend",
        ],
    );
    cron(
        &sb,
        &[
            "edit",
            "trend",
            "--schedule",
            "every 2h",
            "--add-skill",
            "meeting-notes",
        ],
    );
    // context_from is the tool's field; the CLI edits what the reference's CLI edits.
    let mut jobs = jobs(&sb);
    let trend = jobs.iter_mut().find(|j| j["name"] == "trend").unwrap();
    assert_eq!(trend["schedule"]["display"], "every 120m");
    assert_eq!(trend["skills"], serde_json::json!(["meeting-notes"]));
    trend["context_from"] = serde_json::json!([first]);
    let text = serde_json::json!({"jobs": jobs}).to_string();
    std::fs::write(sb.home.path().join("cron/jobs.json"), text).unwrap();
    sb.mock.push(Reply::text("Up by two."));
    cron(&sb, &["run", "trend"]);
    let asked = sb.mock.chat_requests().last().unwrap().to_string();
    assert!(
        asked.contains("## Script Output") && asked.contains("42 open issues"),
        "{asked}"
    );
    assert!(
        asked.contains(&format!("## Output from job '{first}'"))
            && asked.contains("There were 40 yesterday.")
    );
    assert!(
        asked.contains("meeting-notes") && asked.contains("Compare with yesterday."),
        "{asked}"
    );
    let out = sb
        .command()
        .args(["cron", "edit", "trend"])
        .output()
        .unwrap();
    assert!(
        !out.status.success() && stderr(&out).contains("No updates provided"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn schedules_are_read_in_hermes_timezone_or_the_configured_zone() {
    let sb = Sandbox::start();
    // A POSIX TZ string needs no tz database; an IANA name is tried where one is installed.
    let out = sb
        .command()
        .env("HERMES_TIMEZONE", "IST-5:30")
        .args([
            "cron",
            "add",
            "0 9 * * *",
            "Morning report",
            "--name",
            "morning",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let morning = jobs(&sb)
        .into_iter()
        .find(|j| j["name"] == "morning")
        .unwrap();
    let next = morning["next_run_at"].as_str().unwrap();
    assert!(next.ends_with("T09:00:00+05:30"), "{next}");
    sb.add_config("timezone: NZST-12\n");
    cron(
        &sb,
        &["add", "30 18 * * *", "Evening report", "--name", "evening"],
    );
    let evening = jobs(&sb)
        .into_iter()
        .find(|j| j["name"] == "evening")
        .unwrap();
    assert!(
        evening["next_run_at"]
            .as_str()
            .unwrap()
            .ends_with("T18:30:00+12:00"),
        "{evening}"
    );
    if std::path::Path::new("/usr/share/zoneinfo/Asia/Kolkata").exists() {
        let out = sb
            .command()
            .env("HERMES_TIMEZONE", "Asia/Kolkata")
            .args(["cron", "add", "0 7 * * *", "Early", "--name", "early"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let early = jobs(&sb)
            .into_iter()
            .find(|j| j["name"] == "early")
            .unwrap();
        assert!(
            early["next_run_at"]
                .as_str()
                .unwrap()
                .ends_with("T07:00:00+05:30"),
            "{early}"
        );
    }
    // A name that means nothing is said, and the server's time is used.
    let out = sb
        .command()
        .env("HERMES_TIMEZONE", "Mars/Olympus_Mons")
        .args(["cron", "add", "every 1h", "Ping", "--name", "ping"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("unknown time zone \"Mars/Olympus_Mons\""),
        "{}",
        stderr(&out)
    );
}
