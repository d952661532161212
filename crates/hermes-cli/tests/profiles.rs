//! Profiles through the binary: `-p NAME` and the sticky `profile use`
//! each answer from their own home (config, keys, state.db); `create --clone`
//! copies settings but no history; export → import round-trips; a profile
//! that does not exist is named with how to make it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::*;

/// Creates profile `name` whose default model is `model`, on the sandbox's mock.
fn profile_with_model(sb: &Sandbox, name: &str, model: &str) {
    let made = sb.run(&["profile", "create", name]);
    assert!(made.status.success(), "{}", stderr(&made));
    std::fs::write(
        sb.home.path().join("profiles").join(name).join("config.yaml"),
        format!(
            "auxiliary:\n  title_generation:\n    enabled: false\nagent:\n  api_max_retries: 0\nmodel:\n  provider: custom\n  base_url: {}\n  default: {model}\n",
            sb.mock.base_url()
        ),
    )
    .unwrap();
}

fn models_asked(sb: &Sandbox) -> Vec<String> {
    sb.mock
        .chat_requests()
        .iter()
        .map(|r| r["model"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn each_profile_answers_from_its_own_home_and_use_makes_one_sticky() {
    let sb = Sandbox::start();
    profile_with_model(&sb, "work", "work-model");
    profile_with_model(&sb, "home", "home-model");
    std::fs::write(
        sb.home.path().join("profiles/work/.env"),
        "OPENAI_API_KEY=sk-work-only\n",
    )
    .unwrap();

    sb.mock.push(Reply::text("from work"));
    let out = sb.run(&["-p", "work", "chat", "-q", "hi", "-Q"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "from work");
    sb.mock.push(Reply::text("from home"));
    let out = sb.run(&["chat", "-q", "hi", "-Q", "--profile", "home"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(models_asked(&sb), ["work-model", "home-model"]);
    for name in ["work", "home"] {
        assert!(
            sb.home
                .path()
                .join("profiles")
                .join(name)
                .join("state.db")
                .is_file(),
            "{name} keeps its own history"
        );
    }
    let listed = stdout(&sb.run(&["-p", "work", "sessions", "list"]));
    assert_eq!(
        listed.lines().filter(|l| l.contains("hi")).count(),
        1,
        "{listed}"
    );

    // Sticky: plain commands run as the profile in use.
    let used = sb.run(&["profile", "use", "home"]);
    assert!(stdout(&used).contains("Switched to: home"));
    sb.mock.push(Reply::text("sticky home"));
    assert_eq!(stdout(&sb.chat("again", &[])).trim(), "sticky home");
    assert_eq!(models_asked(&sb).last().unwrap(), "home-model");
    let listed = stdout(&sb.run(&["profile", "list"]));
    assert!(listed.contains(" ◆home"), "{listed}");
    // -p wins over the sticky choice; `default` is the root home.
    sb.mock.push(Reply::text("root answer"));
    let out = sb.run(&["-p", "default", "chat", "-q", "hi", "-Q"]);
    assert_eq!(stdout(&out).trim(), "root answer", "{}", stderr(&out));
    assert_eq!(models_asked(&sb).last().unwrap(), "mock-model");
    assert!(sb.run(&["profile", "use", "default"]).status.success());
    assert!(!sb.home.path().join("active_profile").exists());

    let missing = sb.run(&["-p", "nope", "status"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing)
            .contains("Profile 'nope' does not exist. Create it with: hermes profile create nope"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn clone_copies_settings_and_keys_but_not_history_and_export_import_round_trips() {
    let sb = Sandbox::start();
    profile_with_model(&sb, "work", "work-model");
    let work = sb.home.path().join("profiles/work");
    std::fs::write(work.join(".env"), "OPENAI_API_KEY=sk-cloned\n").unwrap();
    std::fs::write(work.join("SOUL.md"), "You are the work bot.\n").unwrap();
    sb.mock.push(Reply::text("logged"));
    assert!(
        sb.run(&["-p", "work", "chat", "-q", "note this", "-Q"])
            .status
            .success()
    );

    let cloned = sb.run(&["profile", "create", "work2", "--clone-from", "work"]);
    assert!(cloned.status.success(), "{}", stderr(&cloned));
    let copy = sb.home.path().join("profiles/work2");
    assert_eq!(
        std::fs::read_to_string(copy.join(".env")).unwrap(),
        "OPENAI_API_KEY=sk-cloned\n"
    );
    assert!(
        std::fs::read_to_string(copy.join("config.yaml"))
            .unwrap()
            .contains("work-model")
    );
    assert!(copy.join("SOUL.md").is_file());
    assert!(
        !copy.join("state.db").exists(),
        "sessions stay with their profile"
    );

    // Export, then import on a fresh root.
    let archive = sb.work_path("work.tar.gz");
    let exported = sb.run(&["profile", "export", "work", "-o", archive.to_str().unwrap()]);
    assert!(exported.status.success(), "{}", stderr(&exported));
    let other = Sandbox::start();
    let imported = other.run(&[
        "profile",
        "import",
        archive.to_str().unwrap(),
        "--name",
        "moved",
    ]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let moved = other.home.path().join("profiles/moved");
    assert!(
        std::fs::read_to_string(moved.join("SOUL.md"))
            .unwrap()
            .contains("work bot")
    );
    let listed = stdout(&other.run(&["-p", "moved", "sessions", "list"]));
    assert!(listed.contains("note this"), "history came along: {listed}");

    let renamed = other.run(&["profile", "rename", "moved", "settled"]);
    assert!(renamed.status.success(), "{}", stderr(&renamed));
    let refused = other.run(&["profile", "delete", "settled"]);
    assert!(!refused.status.success(), "deleting asks first");
    assert!(other.home.path().join("profiles/settled").is_dir());
    let deleted = other.run(&["profile", "delete", "settled", "--yes"]);
    assert!(deleted.status.success(), "{}", stderr(&deleted));
    assert!(!other.home.path().join("profiles/settled").exists());
}

#[test]
fn gateway_install_dry_run_prints_a_unit_for_the_profile() {
    let sb = Sandbox::start();
    assert!(sb.run(&["profile", "create", "bot"]).status.success());
    let out = sb.run(&["-p", "bot", "gateway", "install", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let unit = stdout(&out);
    assert!(unit.contains("hermes-gateway-bot.service"), "{unit}");
    let exec = unit.lines().find(|l| l.starts_with("ExecStart=")).unwrap();
    assert!(
        exec.contains(env!("CARGO_BIN_EXE_hermes")) && exec.contains(" -p bot gateway run"),
        "{exec}"
    );
    assert!(unit.contains(&format!(
        "Environment=HERMES_HOME={}",
        sb.home.path().join("profiles/bot").display()
    )));
    assert!(
        !sb.home.path().join(".config/systemd").exists(),
        "a dry run writes nothing"
    );
}

#[test]
fn send_delivers_to_telegram_with_no_model_request() {
    let Some(tg) = support::telegram::Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    support::telegram::configure(&sb, &tg, "");
    // The chat must exist on the emulator's side: the person says hello first.
    tg.user_says(4242, "hello");
    let token = ("TELEGRAM_BOT_TOKEN", support::telegram::TOKEN);
    let sent = sb
        .command()
        .env(token.0, token.1)
        .args([
            "send",
            "--to",
            "telegram:4242",
            "--subject",
            "[CI]",
            "deploy finished",
        ])
        .output()
        .unwrap();
    assert!(sent.status.success(), "{}", stderr(&sent));
    assert_eq!(stdout(&sent).trim(), "sent");
    let got = tg.wait_for(4242, "the sent text", |t| t.contains("deploy finished"));
    // (Sent as MarkdownV2: brackets arrive escaped.)
    let text = got["text"].as_str().unwrap().replace('\\', "");
    assert!(text.starts_with("[CI]\n\ndeploy finished"), "{got}");

    // From standard input, as JSON.
    let mut piped = sb
        .command()
        .env(token.0, token.1)
        .args(["send", "-t", "telegram:4242", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    piped.stdin.take().unwrap().write_all(b"RAM 92%\n").unwrap();
    let out = piped.wait_with_output().unwrap();
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["success"], true, "{result}");
    tg.wait_for(4242, "the piped text", |t| t.contains("RAM 92%"));
    assert!(sb.mock.chat_requests().is_empty(), "no model was asked");

    // Usage errors exit 2 and say what to do.
    let nowhere = sb
        .command()
        .env(token.0, token.1)
        .args(["send", "hello"])
        .output()
        .unwrap();
    assert_eq!(nowhere.status.code(), Some(2));
    assert!(stderr(&nowhere).contains("--to"), "{}", stderr(&nowhere));
    let unconfigured = sb.run(&["send", "--to", "telegram:1", "x"]);
    assert_eq!(unconfigured.status.code(), Some(2));
    assert!(stderr(&unconfigured).contains("TELEGRAM_BOT_TOKEN"));
}

#[test]
fn gateway_stop_without_a_service_stops_the_gateway_of_this_home() {
    let sb = Sandbox::start();
    let mut gw = support::gateway::gateway(&sb, "");
    let status = sb.run(&["gateway", "status"]);
    assert!(
        stdout(&status).contains("Gateway: running"),
        "{}",
        stdout(&status)
    );
    let stopped = sb.run(&["gateway", "stop"]);
    assert!(
        stopped.status.success(),
        "{}{}",
        stdout(&stopped),
        stderr(&stopped)
    );
    assert!(
        stdout(&stopped).contains(&format!("(pid {})", gw.child.id())),
        "{}",
        stdout(&stopped)
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while gw.child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the gateway kept running"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let state: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sb.home.path().join("gateway_state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["gateway_state"], "stopped", "{state}");
    let again = sb.run(&["gateway", "stop"]);
    assert_eq!(again.status.code(), Some(1));
}

#[test]
fn a_profile_made_by_the_reference_opens_and_resumes_here() {
    let Some(python) =
        std::env::var_os("HERMES_REF_PYTHON").filter(|p| std::path::Path::new(p).exists())
    else {
        eprintln!("skipped: set HERMES_REF_PYTHON to a Python with hermes-agent==0.19.0");
        return;
    };
    let sb = Sandbox::start();
    // The reference's own profile code and session store, on this root.
    let script = r#"
import pathlib, sys
from hermes_cli.profiles import create_profile
import hermes_state
d = create_profile("refbot")
db = hermes_state.SessionDB(db_path=pathlib.Path(d) / "state.db")
db.create_session("20250401_100000_abcdef", "cli", model="mock-model")
db.append_message("20250401_100000_abcdef", "user", content="remember the word papaya")
db.append_message("20250401_100000_abcdef", "assistant", content="Noted: papaya.")
print(d)
"#;
    let made = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .env("HERMES_HOME", sb.home.path())
        .env("HOME", sb.home.path())
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "reference failed: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let dir = sb.home.path().join("profiles/refbot");
    assert!(dir.is_dir(), "{}", String::from_utf8_lossy(&made.stdout));
    std::fs::write(
        dir.join("config.yaml"),
        format!(
            "auxiliary:\n  title_generation:\n    enabled: false\nagent:\n  api_max_retries: 0\nmodel:\n  provider: custom\n  base_url: {}\n  default: mock-model\n",
            sb.mock.base_url()
        ),
    )
    .unwrap();
    let listed = stdout(&sb.run(&["profile", "list"]));
    assert!(listed.contains("refbot"), "{listed}");
    sb.mock.push(Reply::text("It was papaya."));
    let out = sb.run(&[
        "-p",
        "refbot",
        "chat",
        "--resume",
        "20250401_100000_abcdef",
        "-q",
        "which word?",
        "-Q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = sb.mock.chat_requests().last().unwrap().to_string();
    assert!(sent.contains("remember the word papaya"), "{sent}");
}

#[test]
fn one_api_server_serves_every_profile_under_p_name_when_multiplexing() {
    let sb = Sandbox::start();
    profile_with_model(&sb, "work", "work-model");
    sb.mock.push(Reply::text("root says hi"));
    sb.mock.push(Reply::text("work says hi"));
    let gw = support::gateway::gateway(&sb, "gateway:\n  multiplex_profiles: true\n");
    let body = serde_json::json!({"messages": [{"role": "user", "content": "hi"}]});
    let (status, _, root_answer) = support::gateway::post(&gw, "/v1/chat/completions", &body);
    assert_eq!(status, 200, "{root_answer}");
    let (status, headers, work_answer) =
        support::gateway::post(&gw, "/p/work/v1/chat/completions", &body);
    assert_eq!(status, 200, "{work_answer}");
    assert_eq!(
        work_answer["choices"][0]["message"]["content"],
        "work says hi"
    );
    assert_eq!(models_asked(&sb), ["mock-model", "work-model"]);
    // The work profile's session is in its own state.db.
    let session = support::gateway::header(&headers, "x-hermes-session-id")
        .unwrap()
        .to_owned();
    let listed = stdout(&sb.run(&["-p", "work", "sessions", "list"]));
    assert!(listed.contains(&session), "{listed}");
    let (key, value) = support::gateway::auth();
    let (missing, _, _) = support::gateway::http_try(
        gw.port,
        "GET",
        "/p/nope/v1/models",
        &[(key, value.as_str())],
        "",
    )
    .unwrap();
    assert_eq!(missing, 404);
}
