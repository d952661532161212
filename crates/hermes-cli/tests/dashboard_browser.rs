//! The dashboard in Debian's Chromium, driven by Playwright (npm
//! `playwright-core`, no browser download) against the binary and the
//! scripted model: fixtures/dashboard_e2e.mjs does what a person does; this
//! test scripts the model and checks what the clicks changed on disk.
//! Skipped without `HERMES_PLAYWRIGHT` (a node_modules holding playwright-core)
//! or Chromium; `.ci/run` provides both. Screenshots go to
//! `HERMES_DASHBOARD_SHOTS` (else a temporary directory).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::json;
use support::dashboard::start;
use support::*;

fn playwright() -> Option<std::path::PathBuf> {
    let modules = std::path::PathBuf::from(std::env::var_os("HERMES_PLAYWRIGHT")?);
    let chromium = std::env::var("HERMES_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    (modules.join("playwright-core").is_dir() && std::path::Path::new(&chromium).is_file())
        .then_some(modules)
}

#[test]
fn a_person_chats_approves_searches_schedules_and_configures_in_a_browser() {
    let Some(modules) = playwright() else {
        eprintln!("SKIPPED: set HERMES_PLAYWRIGHT to a node_modules with playwright-core");
        return;
    };
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("The deploy finished."));
    assert!(
        sb.chat("how did the kubernetes deploy go?", &[])
            .status
            .success()
    );
    std::fs::create_dir_all(sb.work_path("build")).unwrap();
    let rm = json!({"command": "rm -rf ./build"}).to_string();
    sb.mock.push_all([
        Reply::text("Hello from the browser.")
            .with_chunk_delay(std::time::Duration::from_millis(30)),
        Reply::tool_call("c1", "terminal", &rm),
        Reply::text("Left it alone."),
        Reply::tool_call("c2", "terminal", &rm),
        Reply::text("Cleaned."),
        Reply::text("Cron says hi."),
    ]);
    let dash = start(&sb, &[]);
    let shots = std::env::var_os("HERMES_DASHBOARD_SHOTS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| sb.work_path("shots"));
    std::fs::create_dir_all(&shots).unwrap();
    let script = fixture("dashboard_e2e.mjs");
    // Its own process group, so a browser left behind by a failure dies with it.
    use std::os::unix::process::CommandExt;
    let out = std::process::Command::new("node")
        .arg(&script)
        .arg(format!("http://127.0.0.1:{}/", dash.port))
        .arg(&shots)
        .env("HERMES_PLAYWRIGHT", &modules)
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let group = out.id();
    let out = out.wait_with_output().unwrap();
    // Whatever the browser left in the group. Not `kill -9 -PGID`: procps' kill
    // reads that as `kill(-1, SIGKILL)`, every process of the user.
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(i32::try_from(group).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    );
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success() && said.contains("ALL DONE"), "{said}");

    // The allowed command ran; the denied one had not.
    assert!(
        !sb.work_path("build").exists(),
        "approved once, the command ran"
    );
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(
        config.contains("max_turns: 33") && !config.contains("compact"),
        "{config}"
    );
    let env = std::fs::read_to_string(sb.home.path().join(".env")).unwrap();
    assert!(
        env.contains("EXA_API_KEY=exa-browser-secret-123456"),
        "{env}"
    );
    let jobs = stdout(&sb.run(&["cron", "runs"]));
    assert!(
        jobs.contains("(browser-job)") && jobs.contains(" ok "),
        "{jobs}"
    );
    for page in [
        "chat",
        "sessions",
        "transcript",
        "usage",
        "cron",
        "config",
        "gateway",
        "logs",
    ] {
        assert!(
            shots.join(format!("{page}.png")).is_file(),
            "no screenshot of {page}"
        );
    }
}
