//! What a newcomer trips over (issue 32), each through the binary: settings
//! that cannot be honoured are refused or warned about, the gateway and cron
//! write their logs, tool lists say what the model is really offered, the
//! reference's missing commands say so, a server that is down is reported at
//! once, and cron runs can be read back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::json;
use support::gateway::{KEY, gateway, post};
use support::*;

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Waits until `path` holds `text` (log lines are written as things happen).
fn wait_file(path: &std::path::Path, text: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = read(path);
        if now.contains(text) {
            return now;
        }
        assert!(
            Instant::now() < deadline,
            "{} never said {text:?}:\n{now}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn config_set_refuses_a_backend_it_cannot_run_and_warns_about_what_it_will_not_read() {
    let sb = Sandbox::start();
    let config = sb.home.path().join("config.yaml");
    let before = read(&config);

    let refused = sb.run(&["config", "set", "terminal.backend", "modal"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("local, sandbox, ssh, docker"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(read(&config), before, "nothing is written");

    let typo = sb.run(&["config", "set", "agent.max_turn", "12"]);
    assert!(typo.status.success());
    assert!(
        stderr(&typo).contains("'agent.max_turn' is not a recognized config key")
            && stderr(&typo).contains("Did you mean: agent.max_turns"),
        "{}",
        stderr(&typo)
    );
    let forced = sb.run(&["config", "set", "--force", "my_tool.url", "x"]);
    assert!(
        !stderr(&forced).contains("not a recognized"),
        "{}",
        stderr(&forced)
    );

    // A number under a secret-looking name is shown as it is.
    let odd = sb.run(&["config", "set", "display.nonsense.key", "5"]);
    assert!(
        stdout(&odd).contains("display.nonsense.key = 5 in"),
        "{}",
        stdout(&odd)
    );
    assert!(stderr(&odd).contains("not a recognized config key"));

    // A docker backend with no engine anywhere is saved, with the warning.
    let empty_path = tempfile::tempdir().unwrap();
    let docker = sb
        .command()
        .env("PATH", empty_path.path())
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .args(["config", "set", "terminal.backend", "docker"])
        .output()
        .unwrap();
    assert!(docker.status.success());
    assert!(
        stderr(&docker).contains("no container engine answers")
            && stderr(&docker).contains("docker or podman is not on PATH"),
        "{}",
        stderr(&docker)
    );
    // ssh without a host: saved, and the missing settings named.
    let ssh = sb.run(&["config", "set", "terminal.backend", "ssh"]);
    assert!(
        stderr(&ssh).contains("ssh_host and ssh_user"),
        "{}",
        stderr(&ssh)
    );

    // An environment variable goes to .env, where Hermes reads it.
    let var = sb.run(&["config", "set", "API_SERVER_ENABLED", "true"]);
    assert!(var.status.success());
    assert!(read(&sb.home.path().join(".env")).contains("API_SERVER_ENABLED=true"));
    assert!(!read(&config).contains("API_SERVER_ENABLED"));
}

#[test]
fn the_gateway_writes_gateway_log_and_tags_api_sessions_in_agent_log() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("Paris."));
    let gw = gateway(&sb, "");
    let logs = sb.home.path().join("logs");
    let started = wait_file(&logs.join("gateway.log"), "API server listening on");
    assert!(
        started.contains(" INFO gateway.platforms.api_server: "),
        "the reference's format: {started}"
    );
    let (status, headers, _) = post(
        &gw,
        "/v1/chat/completions",
        &json!({"messages": [{"role": "user", "content": "Capital of France?"}]}),
    );
    assert_eq!(status, 200);
    let session = support::gateway::header(&headers, "x-hermes-session-id")
        .map(str::to_owned)
        .expect("session header");
    let gateway_log = wait_file(
        &logs.join("gateway.log"),
        "POST /v1/chat/completions -> 200",
    );
    assert!(!gateway_log.contains(KEY), "keys never reach a log");
    let agent = wait_file(
        &logs.join("agent.log"),
        &format!("[{session}] agent: turn ended"),
    );
    assert!(
        agent.contains("POST /v1/chat/completions -> 200"),
        "agent.log is the catch-all: {agent}"
    );
    // A wrong key is a warning, in errors.log too.
    let (denied, _, _) = support::gateway::http_try(
        gw.port,
        "POST",
        "/v1/chat/completions",
        &[("Authorization", "Bearer wrong")],
        "{}",
    )
    .unwrap();
    assert_eq!(denied, 401);
    wait_file(&logs.join("errors.log"), "-> 401");

    let shown = sb.run(&["logs", "gateway"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert!(
        stdout(&shown).contains("API server listening"),
        "{}",
        stdout(&shown)
    );
}

#[test]
fn a_telegram_chat_is_logged_in_gateway_log_and_its_turns_in_agent_log() {
    let Some(tg) = support::telegram::Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    support::telegram::configure(&sb, &tg, "");
    sb.mock.push(Reply::text("Hello from the model."));
    let _gw = support::telegram::ChatGateway::start(&sb, &[("TELEGRAM_ALLOWED_USERS", "4242")]);
    tg.user_says(4242, "hi there");
    tg.wait_for(4242, "the answer", |t| t.contains("Hello from the model."));
    let logs = sb.home.path().join("logs");
    let gateway_log = wait_file(
        &logs.join("gateway.log"),
        "response ready: platform=telegram",
    );
    assert!(
        gateway_log.contains("inbound message: platform=telegram")
            && gateway_log.contains("msg=\"hi there\""),
        "{gateway_log}"
    );
    assert!(gateway_log.contains("connected as @"), "{gateway_log}");
    let agent = wait_file(&logs.join("agent.log"), "agent: turn ended");
    let tagged = agent
        .lines()
        .find(|l| l.contains("agent: turn ended"))
        .unwrap();
    assert!(
        tagged.contains(" [20"),
        "tagged with the session id: {tagged}"
    );

    // `gateway status` reads the running gateway's state: each platform,
    // its last poll, and the sessions working right now.
    sb.mock
        .push(Reply::text("Slow answer.").with_delay(Duration::from_secs(6)));
    tg.user_says(4242, "take your time");
    let deadline = Instant::now() + Duration::from_secs(20);
    let busy = loop {
        let shown = stdout(&sb.run(&["gateway", "status"]));
        if shown.contains("Sessions in flight: 1") {
            break shown;
        }
        assert!(Instant::now() < deadline, "never busy: {shown}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        busy.contains("telegram: connected") && busy.contains("last poll"),
        "{busy}"
    );
    tg.wait_for(4242, "the slow answer", |t| t.contains("Slow answer."));
}

#[test]
fn cron_runs_are_logged_listed_and_read_back() {
    let sb = Sandbox::start();
    sb.no_retries();
    let added = sb.run(&["cron", "add", "every 1h", "Say the date", "--name", "daily"]);
    assert!(added.status.success(), "{}", stderr(&added));
    sb.mock.push(Reply::text("It is the 28th."));
    let ran = sb.run(&["cron", "run", "daily"]);
    assert!(ran.status.success(), "{}{}", stdout(&ran), stderr(&ran));
    assert!(
        stdout(&ran).contains("Read it with: hermes cron output"),
        "{}",
        stdout(&ran)
    );
    sb.mock.push(Reply::error(500, "down"));
    sb.mock.push(Reply::error(500, "down"));
    std::thread::sleep(Duration::from_millis(1100));
    let failed = sb.run(&["cron", "run", "daily"]);
    assert!(!failed.status.success());

    let logs = sb.home.path().join("logs");
    let agent = read(&logs.join("agent.log"));
    assert!(
        agent.contains("cron.scheduler: Job 'daily' completed successfully"),
        "{agent}"
    );
    assert!(read(&logs.join("errors.log")).contains("Job 'daily' failed"));

    let runs = sb.run(&["cron", "runs"]);
    assert!(runs.status.success(), "{}", stderr(&runs));
    let text = stdout(&runs);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].contains("failed") && lines[0].contains("(daily)"),
        "newest first: {text}"
    );
    assert!(
        lines[1].contains(" ok ") && lines[1].contains("cron/output/"),
        "{text}"
    );
    let limited = stdout(&sb.run(&["cron", "runs", "daily", "--limit", "1"]));
    assert!(
        limited.contains("(1 older; --limit N shows more)"),
        "{limited}"
    );

    let newest = sb.run(&["cron", "output", "daily"]);
    assert!(newest.status.success());
    assert!(stdout(&newest).contains("(FAILED)"), "{}", stdout(&newest));
    let run_name = lines[1].split_whitespace().next().unwrap();
    let first = sb.run(&["cron", "output", "daily", run_name]);
    assert!(
        stdout(&first).contains("## Response\n\nIt is the 28th."),
        "{}",
        stdout(&first)
    );
    let unknown = sb.run(&["cron", "output", "nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(stderr(&unknown).contains("Job not found: nope"));
}

#[test]
fn tools_list_says_what_the_model_is_offered_and_why_not() {
    let sb = Sandbox::start();
    sb.add_config("browser:\n  executable: /nonexistent/chromium\n");
    let listed = sb.run(&["tools", "list"]);
    assert!(listed.status.success());
    let text = stdout(&listed);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().any(|w| w == name))
            .unwrap_or_else(|| panic!("no {name} line: {text}"))
            .to_owned()
    };
    assert!(
        line("image_gen").contains("not offered")
            && line("image_gen").contains("not in hermes-rs yet")
    );
    assert!(
        line("browser").contains("not offered") && line("browser").contains("no Chromium found")
    );
    assert!(line("file").contains("✓ enabled"));

    // What the list calls enabled and offered is what a chat sends.
    sb.mock.push(Reply::text("ok"));
    assert!(sb.chat("hi", &[]).status.success());
    let offered = tool_names(&sb.requests()[0]);
    assert!(offered.contains(&"read_file".to_owned()));
    for missing in [
        "image_generate",
        "browser_navigate",
        "text_to_speech",
        "computer_use",
    ] {
        assert!(
            !offered.contains(&missing.to_owned()),
            "{missing}: {offered:?}"
        );
    }

    let video = sb.run(&["tools", "enable", "video"]);
    assert_eq!(video.status.code(), Some(1));
    assert!(
        stdout(&video).contains("cannot be enabled"),
        "{}",
        stdout(&video)
    );
    let browser = sb.run(&["tools", "enable", "browser"]);
    assert!(browser.status.success());
    assert!(
        stdout(&browser)
            .contains("Enabled but not offered until fixed — browser: no Chromium found"),
        "{}",
        stdout(&browser)
    );
}

#[test]
fn the_references_missing_commands_say_what_they_are() {
    let sb = Sandbox::start();
    for args in [&["kanban"][..], &["update"], &["backup"]] {
        let out = sb.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let said = stderr(&out);
        assert!(
            said.contains("not in hermes-rs yet") && said.contains("README"),
            "{args:?}: {said}"
        );
    }
    let update = stderr(&sb.run(&["update"]));
    assert!(update.contains("cargo install"), "{update}");
    // A typo is still clap's own error.
    let typo = sb.run(&["chta"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(!stderr(&typo).contains("not in hermes-rs yet"));
}

#[test]
fn a_model_server_that_is_down_is_reported_at_once_with_what_to_do() {
    let sb = Sandbox::start();
    let port = free_port();
    std::fs::write(
        sb.home.path().join("config.yaml"),
        format!("model:\n  provider: custom\n  base_url: http://127.0.0.1:{port}/v1\n"),
    )
    .unwrap();
    let out = sb.chat("hi", &[]);
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert!(
        said.contains(&format!(
            "cannot reach the model server at http://127.0.0.1:{port}/v1"
        )) && said.contains("start it"),
        "{said}"
    );
    assert!(!said.contains("model.default"), "{said}");

    // With a model named, the call fails on its first try: a refused
    // connection on this machine is not retried.
    let out = sb.run(&["chat", "-q", "hi", "-m", "some-model"]);
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert!(said.contains("is the server running"), "{said}");
    assert!(!said.to_ascii_lowercase().contains("retrying"), "{said}");
    // The error's lines stay lines in errors.log (no literal \n).
    let errors = read(&sb.home.path().join("logs/errors.log"));
    assert!(!errors.contains("\\n"), "{errors}");
    assert!(
        errors.lines().any(|l| l.trim_start().starts_with('→')),
        "the hint is its own line: {errors}"
    );
}

#[test]
fn help_texts_say_what_each_command_is() {
    let sb = Sandbox::start();
    let help = stdout(&sb.run(&["--help"]));
    assert!(help.starts_with("Hermes Agent: a self-improving"), "{help}");
    let model = stdout(&sb.run(&["model", "--help"]));
    assert!(model.contains("provider and model"), "{model}");
    let list = stdout(&sb.run(&["model", "list"]));
    let bedrock = list.lines().find(|l| l.contains("bedrock")).unwrap();
    assert!(bedrock.contains("needs AWS credentials"), "{bedrock}");
}
