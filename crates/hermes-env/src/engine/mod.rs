//! The Docker Engine API on the engine's Unix socket (Docker's, or
//! Podman's compatible one): containers made, found, started and removed,
//! and commands run in them by exec. A command must be a process the
//! terminal can stream, time out and kill, so each exec is driven by a small
//! relay process (this binary in its `__engine-exec` mode) that attaches its
//! own stdin, stdout and stderr to the exec's and exits with its status.

mod http;
pub mod relay;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

/// The API version spoken (Docker 20.10+, Podman 3+).
const API: &str = "/v1.41";

/// How long an image pull may take.
const PULL_TIMEOUT: Duration = Duration::from_secs(900);

/// The engine's socket: `DOCKER_HOST` (`unix://…`), else Docker's, else
/// Podman's (rootless, then root); the first that answers `/_ping`.
pub fn find_socket(docker_host: Option<&str>, runtime_dir: Option<&str>) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(host) = docker_host.filter(|h| !h.is_empty()) {
        // A TCP or SSH DOCKER_HOST is the CLI's to reach.
        candidates.push(PathBuf::from(host.strip_prefix("unix://")?));
    } else {
        candidates.push(PathBuf::from("/var/run/docker.sock"));
        if let Some(dir) = runtime_dir.filter(|d| !d.is_empty()) {
            candidates.push(Path::new(dir).join("podman/podman.sock"));
        }
        candidates.push(PathBuf::from("/run/podman/podman.sock"));
    }
    candidates.into_iter().find(|socket| ping(socket))
}

/// Whether an engine answers on `socket`.
pub fn ping(socket: &Path) -> bool {
    http::call_within(socket, "GET", "/_ping", None, Duration::from_secs(5))
        .is_ok_and(|a| a.status == 200)
}

/// Percent-encodes a query value.
fn query(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One engine.
#[derive(Debug, Clone)]
pub struct Engine {
    socket: PathBuf,
}

fn failed(what: &str, answer: &http::Answer) -> String {
    format!("{what}: {} ({})", answer.message(), answer.status)
}

impl Engine {
    /// The engine at `socket`.
    pub fn new(socket: PathBuf) -> Self {
        Self { socket }
    }

    /// Its socket.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<http::Answer, String> {
        http::call(&self.socket, method, &format!("{API}{path}"), body).map_err(|e| {
            format!(
                "the engine at {} does not answer: {e}",
                self.socket.display()
            )
        })
    }

    /// Whether container `name` runs (`None`: there is none).
    pub fn running(&self, name: &str) -> Result<Option<bool>, String> {
        let answer = self.call("GET", &format!("/containers/{}/json", query(name)), None)?;
        match answer.status {
            200 => Ok(Some(answer.body["State"]["Running"] == true)),
            404 => Ok(None),
            _ => Err(failed("inspecting a container", &answer)),
        }
    }

    /// Removes container `name` (running or not).
    pub fn remove(&self, name: &str) -> Result<(), String> {
        let answer = self.call(
            "DELETE",
            &format!("/containers/{}?force=true", query(name)),
            None,
        )?;
        match answer.status {
            200 | 204 | 404 => Ok(()),
            _ => Err(failed("removing a container", &answer)),
        }
    }

    /// Creates container `name` from `spec` (the create body), pulling its
    /// image first when the engine does not have it, and starts it.
    pub fn create_and_start(&self, name: &str, spec: &Value) -> Result<(), String> {
        let path = format!("/containers/create?name={}", query(name));
        let mut answer = self.call("POST", &path, Some(spec))?;
        if answer.status == 404 {
            let image = spec["Image"].as_str().unwrap_or_default();
            self.pull(image)?;
            answer = self.call("POST", &path, Some(spec))?;
        }
        if answer.status != 201 {
            return Err(failed("creating a container", &answer));
        }
        let started = self.call("POST", &format!("/containers/{}/start", query(name)), None)?;
        match started.status {
            204 | 304 => Ok(()),
            _ => Err(failed("starting a container", &started)),
        }
    }

    fn pull(&self, image: &str) -> Result<(), String> {
        let (repo, tag) = match image.rsplit_once(':').filter(|(_, t)| !t.contains('/')) {
            Some((repo, tag)) => (repo, tag),
            None => (image, "latest"),
        };
        let path = format!(
            "{API}/images/create?fromImage={}&tag={}",
            query(repo),
            query(tag)
        );
        let answer = http::call_within(&self.socket, "POST", &path, None, PULL_TIMEOUT)
            .map_err(|e| format!("pulling {image}: {e}"))?;
        if answer.status != 200 {
            return Err(failed(&format!("pulling {image}"), &answer));
        }
        Ok(())
    }

    /// The ids of exited containers carrying `label=1`.
    pub fn exited_with_label(&self, label: &str) -> Result<Vec<String>, String> {
        let filters = json!({"label": [format!("{label}=1")], "status": ["exited"]});
        let answer = self.call(
            "GET",
            &format!(
                "/containers/json?all=true&filters={}",
                query(&filters.to_string())
            ),
            None,
        )?;
        if answer.status != 200 {
            return Err(failed("listing containers", &answer));
        }
        Ok(answer
            .body
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|c| c["Id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default())
    }
}

/// The create body of a hardened container (see `Docker::run_args` for the
/// same settings on the command line).
pub fn container_spec(
    settings: &crate::settings::DockerSettings,
    name: &str,
    label: &str,
    capabilities: &[&str],
    persistent_dir: Option<&Path>,
) -> Value {
    let mut binds: Vec<String> = Vec::new();
    if let Some(dir) = persistent_dir {
        binds.push(format!("{}:/workspace", dir.display()));
    }
    binds.extend(settings.volumes.iter().cloned());
    let mut host = json!({
        "CapDrop": ["ALL"],
        "CapAdd": capabilities,
        "SecurityOpt": ["no-new-privileges"],
        "PidsLimit": 512,
        "Tmpfs": {"/tmp": "rw,nosuid,size=512m"},
        "Binds": binds,
    });
    if !settings.network {
        host["NetworkMode"] = json!("none");
    }
    if settings.cpu > 0.0 {
        host["NanoCpus"] = json!((settings.cpu * 1e9) as i64);
    }
    if settings.memory_mb > 0 {
        host["Memory"] = json!(settings.memory_mb.saturating_mul(1024 * 1024));
    }
    let env: Vec<String> = settings
        .env
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    json!({
        "Image": settings.image,
        "Cmd": ["sleep", "infinity"],
        "WorkingDir": "/workspace",
        "Env": env,
        "Labels": {label: "1", "hermes.container": name},
        "HostConfig": host,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(query("a b/{\"c\"}"), "a%20b%2F%7B%22c%22%7D");
        assert_eq!(query("hermes-1_x.y"), "hermes-1_x.y");
    }

    #[test]
    fn a_tcp_docker_host_is_left_to_the_cli() {
        assert_eq!(find_socket(Some("tcp://10.0.0.1:2375"), None), None);
    }
}
