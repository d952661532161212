//! A real Home Assistant on loopback (`HERMES_HASS_PYTHON`: a venv with
//! `homeassistant` installed, as `.ci/run` makes it) with a kitchen light and
//! a front-door lock made of template entities, and a long-lived access
//! token written into its auth store before it starts (no onboarding).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::free_port;
use super::gateway::http_try;

const CONFIG: &str = r#"homeassistant:
  name: Test
  unit_system: metric
  time_zone: UTC
  latitude: 0
  longitude: 0
  elevation: 0
http:
  server_host: 127.0.0.1
  server_port: PORT
api:
input_boolean:
  kitchen:
    name: Kitchen switch
  front_door_locked:
    name: Front door locked
    initial: true
light:
  - platform: template
    lights:
      kitchen:
        friendly_name: Kitchen Light
        value_template: "{{ is_state('input_boolean.kitchen', 'on') }}"
        turn_on:
          service: input_boolean.turn_on
          target:
            entity_id: input_boolean.kitchen
        turn_off:
          service: input_boolean.turn_off
          target:
            entity_id: input_boolean.kitchen
lock:
  - platform: template
    name: Front Door
    value_template: "{{ is_state('input_boolean.front_door_locked', 'on') }}"
    lock:
      service: input_boolean.turn_on
      target:
        entity_id: input_boolean.front_door_locked
    unlock:
      service: input_boolean.turn_off
      target:
        entity_id: input_boolean.front_door_locked
"#;

/// Writes `.storage/auth` with an owner and a long-lived refresh token and
/// prints an access token (a JWT signed with that token's key, as Home
/// Assistant issues them).
const MAKE_TOKEN: &str = r#"
import datetime, json, os, secrets, sys, time, jwt
folder = os.path.join(sys.argv[1], ".storage")
os.makedirs(folder, exist_ok=True)
rid, key = secrets.token_hex(16), secrets.token_hex(64)
now = int(time.time())
auth = {"version": 1, "minor_version": 1, "key": "auth", "data": {
  "users": [{"id": "owner", "group_ids": ["system-admin"], "is_owner": True, "is_active": True,
             "name": "Test", "system_generated": False, "local_only": False}],
  "groups": [{"id": "system-admin", "name": "Administrators"},
             {"id": "system-users", "name": "Users"},
             {"id": "system-read-only", "name": "Read Only"}],
  "credentials": [],
  "refresh_tokens": [{"id": rid, "user_id": "owner", "client_id": None, "client_name": "hermes-test",
    "client_icon": None, "token_type": "long_lived_access_token",
    "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    "access_token_expiration": 315360000.0, "token": secrets.token_hex(64), "jwt_key": key,
    "last_used_at": None, "last_used_ip": None, "credential_id": None, "version": "2024.3.3"}]}}
with open(os.path.join(folder, "auth"), "w") as f:
    json.dump(auth, f)
print(jwt.encode({"iss": rid, "iat": now, "exp": now + 315360000}, key, algorithm="HS256"))
"#;

/// Lists the persistent notifications through the WebSocket API (aiohttp
/// comes with Home Assistant).
const NOTIFICATIONS: &str = r#"
import asyncio, json, sys, aiohttp
async def main(url, token):
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(url) as ws:
            await ws.receive_json()
            await ws.send_json({"type": "auth", "access_token": token})
            await ws.receive_json()
            await ws.send_json({"id": 1, "type": "persistent_notification/get"})
            while True:
                msg = await ws.receive_json()
                if msg.get("id") == 1:
                    print(json.dumps(msg.get("result", [])))
                    return
asyncio.run(main(sys.argv[1], sys.argv[2]))
"#;

/// A running Home Assistant; killed on drop.
pub struct HomeAssistant {
    child: Child,
    pub port: u16,
    pub token: String,
    python: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for HomeAssistant {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HomeAssistant {
    /// Starts one, or `None` when `HERMES_HASS_PYTHON` is not set.
    pub fn start() -> Option<Self> {
        let python = PathBuf::from(std::env::var_os("HERMES_HASS_PYTHON")?);
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        std::fs::write(
            dir.path().join("configuration.yaml"),
            CONFIG.replace("PORT", &port.to_string()),
        )
        .unwrap();
        let made = Command::new(&python)
            .args(["-c", MAKE_TOKEN])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        let token = String::from_utf8(made.stdout).unwrap().trim().to_owned();
        let child = Command::new(&python)
            .args(["-m", "homeassistant", "--skip-pip", "-c"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let ha = Self {
            child,
            port,
            token,
            python,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(90);
        // Up when the lock (the last entity set up) has a state.
        while ha.state("lock.front_door").is_none() {
            assert!(
                Instant::now() < deadline,
                "Home Assistant never came up on port {port}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        Some(ha)
    }

    /// Its base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The persistent notifications shown now.
    pub fn notifications(&self) -> Vec<Value> {
        let out = Command::new(&self.python)
            .args(["-c", NOTIFICATIONS])
            .arg(format!("ws://127.0.0.1:{}/api/websocket", self.port))
            .arg(&self.token)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// Calls a service (as a person in the house would, by a switch).
    pub fn call(&self, domain: &str, service: &str, entity: &str) {
        let auth = format!("Bearer {}", self.token);
        let body = serde_json::json!({"entity_id": entity}).to_string();
        let (status, _, reply) = http_try(
            self.port,
            "POST",
            &format!("/api/services/{domain}/{service}"),
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            &body,
        )
        .unwrap();
        assert_eq!(status, 200, "{reply}");
    }

    /// An entity's state as Home Assistant reports it now.
    pub fn state(&self, entity: &str) -> Option<String> {
        let auth = format!("Bearer {}", self.token);
        let (status, _, body) = http_try(
            self.port,
            "GET",
            &format!("/api/states/{entity}"),
            &[("Authorization", &auth)],
            "",
        )
        .ok()?;
        if status != 200 {
            return None;
        }
        let v: Value = serde_json::from_str(&body).ok()?;
        v["state"].as_str().map(str::to_owned)
    }
}
