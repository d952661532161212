//! The `ha_*` tools against a real Home Assistant (see
//! `support/homeassistant.rs`): the model lists, switches and reads a light;
//! unlocking the front door needs approval; host-code domains are refused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::homeassistant::HomeAssistant;
use support::{Sandbox, messages_with_role, stderr, stdout, tool_content, tool_names};

fn call(id: &str, tool: &str, args: Value) -> Reply {
    Reply::tool_call(id, tool, &args.to_string())
}

/// The sandbox's `.env` pointing at `ha`.
fn connect(sb: &Sandbox, ha: &HomeAssistant) {
    std::fs::write(
        sb.home.path().join(".env"),
        format!("HASS_URL={}\nHASS_TOKEN={}\n", ha.url(), ha.token),
    )
    .unwrap();
}

/// The tool results of the last request, in order.
fn results(sb: &Sandbox) -> Vec<Value> {
    let last = sb.requests().last().unwrap().clone();
    messages_with_role(&last, "tool")
        .into_iter()
        .map(tool_content)
        .collect()
}

#[test]
fn the_model_switches_a_light_and_an_unlock_waits_for_approval() {
    let Some(ha) = HomeAssistant::start() else {
        eprintln!("skipped: HERMES_HASS_PYTHON is not set");
        return;
    };
    let sb = Sandbox::start();
    sb.no_retries();

    // Without a token the tools are not offered, and `tools list` says why.
    sb.mock.push(Reply::text("no tools"));
    let out = sb.chat("hi", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !tool_names(&sb.requests()[0])
            .iter()
            .any(|n| n.starts_with("ha_"))
    );
    let listed = stdout(&sb.run(&["tools", "list"]));
    assert!(listed.contains("HASS_TOKEN"), "{listed}");

    connect(&sb, &ha);
    sb.mock
        .push(call("c1", "ha_list_entities", json!({"domain": "light"})));
    sb.mock.push(call(
        "c2",
        "ha_call_service",
        json!({"domain": "light", "service": "turn_on", "entity_id": "light.kitchen"}),
    ));
    sb.mock.push(call(
        "c3",
        "ha_get_state",
        json!({"entity_id": "light.kitchen"}),
    ));
    sb.mock.push(Reply::text("The kitchen light is on."));
    let out = sb.chat("turn on the kitchen light", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let offered = tool_names(&sb.requests()[1]);
    for name in [
        "ha_list_entities",
        "ha_get_state",
        "ha_list_services",
        "ha_call_service",
    ] {
        assert!(
            offered.iter().any(|n| n == name),
            "{name} not in {offered:?}"
        );
    }
    let got = results(&sb);
    assert_eq!(got[0]["result"]["count"], 1, "{}", got[0]);
    assert_eq!(
        got[0]["result"]["entities"][0]["entity_id"],
        "light.kitchen"
    );
    assert_eq!(
        got[0]["result"]["entities"][0]["friendly_name"],
        "Kitchen Light"
    );
    assert_eq!(got[1]["result"]["success"], true, "{}", got[1]);
    assert_eq!(got[1]["result"]["service"], "light.turn_on");
    assert_eq!(got[2]["result"]["state"], "on", "{}", got[2]);
    assert_eq!(ha.state("light.kitchen").as_deref(), Some("on"));

    // Unlocking the front door in a one-shot run: nobody can approve, so no.
    let unlock = json!({"domain": "lock", "service": "unlock", "entity_id": "lock.front_door"});
    sb.mock.push(call("u1", "ha_call_service", unlock.clone()));
    sb.mock.push(Reply::text("I could not unlock it."));
    let out = sb.chat("unlock the front door", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let refused = sb.requests().last().unwrap().clone();
    let text = messages_with_role(&refused, "tool").last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!text.contains("\"success\""), "{text}");
    assert_eq!(ha.state("lock.front_door").as_deref(), Some("locked"));
    // With --yolo it goes through.
    sb.mock.push(call("u2", "ha_call_service", unlock));
    sb.mock.push(Reply::text("Unlocked."));
    let out = sb.chat("unlock the front door", &["--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(ha.state("lock.front_door").as_deref(), Some("unlocked"));

    // Domains that run code on the Home Assistant host are refused; a bad
    // entity id never reaches it; HA's own errors come back as errors.
    sb.mock.push(call(
        "s1",
        "ha_call_service",
        json!({"domain": "shell_command", "service": "wipe"}),
    ));
    sb.mock.push(call(
        "s2",
        "ha_get_state",
        json!({"entity_id": "../api/config"}),
    ));
    sb.mock.push(call(
        "s3",
        "ha_get_state",
        json!({"entity_id": "light.nowhere"}),
    ));
    sb.mock
        .push(call("s4", "ha_list_services", json!({"domain": "light"})));
    sb.mock.push(Reply::text("done"));
    let out = sb.chat("try things", &["--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = results(&sb);
    let n = got.len();
    assert!(
        got[n - 4]["error"]
            .as_str()
            .unwrap()
            .contains("is blocked for security"),
        "{}",
        got[n - 4]
    );
    assert_eq!(
        got[n - 3]["error"],
        "Invalid entity_id format: ../api/config"
    );
    assert!(
        got[n - 2]["error"]
            .as_str()
            .unwrap()
            .starts_with("Failed to get state for light.nowhere: 404"),
        "{}",
        got[n - 2]
    );
    let services = &got[n - 1]["result"];
    assert_eq!(services["count"], 1, "{}", got[n - 1]);
    assert_eq!(services["domains"][0]["domain"], "light");
    assert!(services["domains"][0]["services"]["turn_on"]["description"].is_string());

    // The token never reaches the model, the logs or the session store.
    let db = std::fs::read(sb.home.path().join("state.db")).unwrap();
    assert!(!String::from_utf8_lossy(&db).contains(&ha.token));
    for body in sb.requests() {
        assert!(!body.to_string().contains(&ha.token));
    }
}

#[test]
fn watched_state_changes_reach_the_agent_and_answers_become_notifications() {
    let Some(ha) = HomeAssistant::start() else {
        return;
    };
    let sb = Sandbox::start();
    sb.no_retries();
    connect(&sb, &ha);
    sb.add_config(
        "platforms:\n  homeassistant:\n    extra:\n      watch_entities: [input_boolean.kitchen]\n      cooldown_seconds: 0\n",
    );
    sb.mock
        .push(Reply::text("Noted: the kitchen switch is on."));
    let _gw = support::telegram::ChatGateway::start_with(
        &sb,
        &[],
        "homeassistant: connected as @homeassistant",
    );
    // The switch also turns the template light on, which nobody watches.
    ha.call("input_boolean", "turn_on", "input_boolean.kitchen");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let shown = loop {
        let all = ha.notifications();
        if let Some(n) = all.iter().find(|n| {
            n["message"]
                .as_str()
                .is_some_and(|m| m.contains("kitchen switch is on"))
        }) {
            break n.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no notification: {all:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert_eq!(shown["title"], "Hermes Agent");
    let requests = sb.requests();
    assert_eq!(requests.len(), 1, "only the watched entity was heard");
    let told = messages_with_role(&requests[0], "user")[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        told.contains("[Home Assistant] Kitchen switch turned on (input_boolean.kitchen)"),
        "{told}"
    );
}
