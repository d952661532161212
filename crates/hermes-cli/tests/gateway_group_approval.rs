//! In a group chat only the person whose message started the turn (or an
//! admin) can approve its dangerous command: another allowlisted member's
//! button press or `/approve` is refused. Real `telegram-test-api`
//! emulator; skipped when it is not installed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::json;
use support::telegram::{ChatGateway, Emulator, configure};
use support::*;

const ANN: i64 = 4242;
const BOB: i64 = 777;
const GROUP: i64 = -100_123;

fn start(admins: Option<&str>) -> Option<(Emulator, Sandbox, std::path::PathBuf, ChatGateway)> {
    let tg = Emulator::start()?;
    let sb = Sandbox::start();
    configure(
        &sb,
        &tg,
        "    require_mention: false\ngroup_sessions_per_user: false\n",
    );
    let victim = sb.work_path("victim");
    std::fs::create_dir_all(victim.join("inner")).unwrap();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "terminal",
            &json!({"command": format!("rm -rf {}", victim.display())}).to_string(),
        ),
        Reply::text("Removed it."),
    ]);
    let users = format!("{ANN},{BOB}");
    let mut env = vec![("TELEGRAM_ALLOWED_USERS", users.as_str())];
    if let Some(a) = admins {
        env.push(("TELEGRAM_ADMIN_USERS", a));
    }
    let gw = ChatGateway::start(&sb, &env);
    Some((tg, sb, victim, gw))
}

#[test]
fn another_member_cannot_approve_my_dangerous_command() {
    let Some((tg, _sb, victim, _gw)) = start(None) else {
        return;
    };
    tg.user_says_in_group(ANN, GROUP, "clean up victim");
    let ask = tg.wait_for(GROUP, "asking for approval", |t| {
        t.contains("Command Approval Required")
    });
    let allow = ask["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        .as_str()
        .unwrap()
        .to_owned();
    tg.press_in_group(BOB, &ask, &allow);
    tg.user_says_in_group(BOB, GROUP, "/approve");
    tg.wait_for(GROUP, "refusing Bob", |t| {
        t.contains("Only the person who asked for this task")
    });
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(victim.exists(), "Bob's approval ran Ann's command");
    tg.user_says_in_group(ANN, GROUP, "/approve");
    tg.wait_for(GROUP, "after Ann's approval", |t| t.contains("Removed it."));
    assert!(!victim.exists(), "Ann's approval ran it");
}

#[test]
fn an_admin_can_approve_for_the_group() {
    let Some((tg, _sb, victim, _gw)) = start(Some(&BOB.to_string())) else {
        return;
    };
    tg.user_says_in_group(ANN, GROUP, "clean up victim");
    tg.wait_for(GROUP, "asking for approval", |t| {
        t.contains("Command Approval Required")
    });
    tg.user_says_in_group(BOB, GROUP, "/approve");
    tg.wait_for(GROUP, "after the admin's approval", |t| {
        t.contains("Removed it.")
    });
    assert!(!victim.exists());
}
