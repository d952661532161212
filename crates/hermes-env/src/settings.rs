//! `terminal:` in config.yaml (the reference's keys) and the `TERMINAL_*`
//! variables that override them, as the reference reads them.

use hermes_state::settings::lenient::{flag_of, number_of};
use serde_json::Value;

/// Which environment the configuration names.
#[derive(Debug, Clone, PartialEq)]
pub enum Backend {
    /// The host itself.
    Local,
    /// The host inside a bubblewrap box (ours).
    Sandbox {
        /// `terminal.sandbox_network`: the box may reach the network.
        network: bool,
    },
    /// Another host over the system `ssh`.
    Ssh(SshSettings),
    /// A container through the `docker` / `podman` command line.
    Docker(DockerSettings),
    /// A backend this build does not have (`docker`, `modal`, `daytona`, `singularity` …).
    Unavailable(String),
}

/// Where and how to reach the SSH host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshSettings {
    /// `ssh_host`.
    pub host: String,
    /// `ssh_user`.
    pub user: String,
    /// `ssh_port`.
    pub port: u16,
    /// `ssh_key`: an identity file, or none for the agent's / default keys.
    pub key: Option<String>,
    /// `cwd` on the remote host, when configured (else its home).
    pub cwd: Option<String>,
    /// Seconds to wait for a connection.
    pub connect_timeout: u64,
}

/// The container's image, mounts and limits (the reference's `docker_*` and
/// `container_*` keys).
#[derive(Debug, Clone, PartialEq)]
pub struct DockerSettings {
    /// `docker_image`.
    pub image: String,
    /// `docker_volumes`: `host:container[:opts]` entries.
    pub volumes: Vec<String>,
    /// `docker_forward_env`: variable names passed in by name.
    pub forward_env: Vec<String>,
    /// `docker_env`: literal variables set in the container.
    pub env: Vec<(String, String)>,
    /// `container_cpu` (0: no limit).
    pub cpu: f64,
    /// `container_memory` in MB (0: no limit).
    pub memory_mb: u64,
    /// `container_persistent`: a host directory mounted at `/workspace`.
    pub persistent: bool,
    /// `docker_network` (false: `--network none`).
    pub network: bool,
    /// `docker_cli` (or `HERMES_DOCKER_CLI`): the engine's command line, a
    /// name on `PATH` or a path; none to use the first of `docker` and
    /// `podman` that answers.
    pub cli: Option<String>,
}

/// The reference's default image.
pub const DEFAULT_IMAGE: &str = "nikolaik/python-nodejs:python3.11-nodejs20";

/// The `terminal` section as far as choosing an environment goes.
#[derive(Debug, Clone, PartialEq)]
pub struct TerminalSettings {
    /// The environment.
    pub backend: Backend,
}

impl Default for TerminalSettings {
    fn default() -> Self {
        Self {
            backend: Backend::Local,
        }
    }
}

impl TerminalSettings {
    /// Reads `terminal:` from the config tree; `env` looks up `TERMINAL_*`
    /// variables, which win as in the reference.
    pub fn read(tree: &Value, env: &dyn Fn(&str) -> Option<String>) -> Result<Self, String> {
        let section = tree.get("terminal").cloned().unwrap_or(Value::Null);
        let key = |name: &str| -> Option<String> {
            match section.get(name)? {
                Value::String(s) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            }
        };
        let var = |name: &str| {
            env(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let backend = var("TERMINAL_ENV")
            .or_else(|| key("backend"))
            .unwrap_or_else(|| "local".to_owned())
            .to_ascii_lowercase();
        let truthy = |v: Option<String>| v.and_then(|v| flag_of(&Value::String(v))) == Some(true);
        let backend = match backend.as_str() {
            "local" => Backend::Local,
            "sandbox" => Backend::Sandbox {
                network: truthy(var("TERMINAL_SANDBOX_NETWORK").or_else(|| key("sandbox_network"))),
            },
            "ssh" => {
                let host = var("TERMINAL_SSH_HOST").or_else(|| key("ssh_host"));
                let user = var("TERMINAL_SSH_USER").or_else(|| key("ssh_user"));
                let (Some(host), Some(user)) = (host, user) else {
                    return Err("terminal.backend is ssh but ssh_host and ssh_user are not both \
                                set. Set terminal.ssh_host and terminal.ssh_user in config.yaml (or \
                                TERMINAL_SSH_HOST / TERMINAL_SSH_USER), or choose another backend."
                        .to_owned());
                };
                let port = var("TERMINAL_SSH_PORT")
                    .or_else(|| key("ssh_port"))
                    .map_or(Ok(22), |p| p.parse::<u16>())
                    .map_err(|_| "terminal.ssh_port must be a port number (1-65535)".to_owned())?;
                let cwd = var("TERMINAL_CWD")
                    .or_else(|| key("cwd"))
                    .filter(|c| !matches!(c.as_str(), "." | "auto" | "cwd"));
                Backend::Ssh(SshSettings {
                    host,
                    user,
                    port,
                    key: var("TERMINAL_SSH_KEY").or_else(|| key("ssh_key")),
                    cwd,
                    connect_timeout: 10,
                })
            }
            "docker" => Backend::Docker(docker(&section, &var)),
            other => Backend::Unavailable(other.to_owned()),
        };
        Ok(Self { backend })
    }
}

/// The `docker_*` / `container_*` keys, with their `TERMINAL_*` overrides.
fn docker(section: &Value, var: &dyn Fn(&str) -> Option<String>) -> DockerSettings {
    let text = |name: &str| section.get(name).and_then(Value::as_str).map(str::to_owned);
    let list = |name: &str| -> Vec<String> {
        match section.get(name) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(Value::String(s)) => s
                .split(',')
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .collect(),
            _ => Vec::new(),
        }
    };
    let number =
        |name: &str, default: f64| section.get(name).and_then(number_of).unwrap_or(default);
    // The config key, overridden by `TERMINAL_<KEY>` as in the reference.
    let flag = |name: &str, default: bool| {
        var(&format!("TERMINAL_{}", name.to_ascii_uppercase()))
            .map(Value::String)
            .or_else(|| section.get(name).cloned())
            .and_then(|v| flag_of(&v))
            .unwrap_or(default)
    };
    let env = match section.get("docker_env") {
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                )
            })
            .collect(),
        _ => Vec::new(),
    };
    DockerSettings {
        image: var("TERMINAL_DOCKER_IMAGE")
            .or_else(|| text("docker_image"))
            .unwrap_or_else(|| DEFAULT_IMAGE.to_owned()),
        volumes: list("docker_volumes"),
        forward_env: list("docker_forward_env"),
        env,
        cpu: number("container_cpu", 1.0),
        memory_mb: number("container_memory", 5120.0) as u64,
        persistent: flag("container_persistent", true),
        network: flag("docker_network", true),
        cli: var("HERMES_DOCKER_CLI")
            .or_else(|| text("docker_cli").filter(|c| !c.trim().is_empty())),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn read(tree: Value, vars: &[(&str, &str)]) -> Result<TerminalSettings, String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        TerminalSettings::read(&tree, &|name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn backends_are_read_from_config_and_environment() {
        assert_eq!(read(json!({}), &[]).unwrap().backend, Backend::Local);
        assert_eq!(
            read(json!({"terminal": {"backend": "sandbox"}}), &[])
                .unwrap()
                .backend,
            Backend::Sandbox { network: false }
        );
        assert_eq!(
            read(
                json!({"terminal": {"backend": "sandbox", "sandbox_network": true}}),
                &[]
            )
            .unwrap()
            .backend,
            Backend::Sandbox { network: true }
        );
        let ssh = read(
            json!({"terminal": {"backend": "ssh", "ssh_host": "box", "ssh_user": "me", "ssh_port": 2222}}),
            &[("TERMINAL_SSH_KEY", "/k")],
        )
        .unwrap();
        let Backend::Ssh(s) = ssh.backend else {
            unreachable!("ssh")
        };
        assert_eq!(
            (s.host.as_str(), s.user.as_str(), s.port),
            ("box", "me", 2222)
        );
        assert_eq!(s.key.as_deref(), Some("/k"));
        assert_eq!(
            read(
                json!({"terminal": {"backend": "local"}}),
                &[("TERMINAL_ENV", "modal")]
            )
            .unwrap()
            .backend,
            Backend::Unavailable("modal".into())
        );
        let docker = read(
            json!({"terminal": {"backend": "docker", "docker_image": "debian:12", "docker_network": false, "docker_forward_env": ["GH_TOKEN"], "container_memory": 1024}}),
            &[],
        )
        .unwrap();
        let Backend::Docker(d) = docker.backend else {
            unreachable!("docker")
        };
        assert_eq!(d.image, "debian:12");
        assert!(!d.network);
        assert_eq!(d.forward_env, ["GH_TOKEN"]);
        assert_eq!(d.memory_mb, 1024);
        assert_eq!(d.cli, None);
        let pick = |tree: Value, vars: &[(&str, &str)]| {
            let Backend::Docker(d) = read(tree, vars).unwrap().backend else {
                unreachable!("docker")
            };
            d.cli
        };
        let configured = json!({"terminal": {"backend": "docker", "docker_cli": "podman"}});
        assert_eq!(pick(configured.clone(), &[]).as_deref(), Some("podman"));
        assert_eq!(
            pick(configured, &[("HERMES_DOCKER_CLI", "/opt/docker")]).as_deref(),
            Some("/opt/docker")
        );
        let err = read(json!({"terminal": {"backend": "ssh"}}), &[]).unwrap_err();
        assert!(err.contains("ssh_host"), "{err}");
    }
}
