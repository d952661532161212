//! Where the agent's commands run (`terminal.backend`): the local host, a
//! bubblewrap sandbox on it, another host over SSH, or a container (the
//! Docker Engine API, or the docker/podman command line). One
//! [`Environment`] builds the process for a command inside it; the
//! [`files`] module does file operations as commands in it, so the file
//! tools see exactly what the commands see. A backend that cannot be used
//! is an error, never a silent local run.

mod docker;
pub mod engine;
mod error;
pub mod files;
mod held_box;
mod launcher;
mod local;
mod sandbox;
mod settings;
mod ssh;

use std::path::Path;
use std::sync::Arc;

pub use docker::Docker;
pub use error::EnvError;
pub use launcher::{Ended, Job, Launchers};
pub use local::Local;
pub use sandbox::{Sandbox, SandboxOptions};
pub use settings::{Backend, DockerSettings, SshSettings, TerminalSettings};
pub use ssh::{SSH_FAILURE, Ssh};

/// A place commands run.
pub trait Environment: Send + Sync + std::fmt::Debug {
    /// `local`, `sandbox`, `ssh`.
    fn kind(&self) -> &'static str;

    /// Whether files and processes are the host's own, so tools may use the
    /// disk directly.
    fn is_host(&self) -> bool;

    /// A process that runs `argv` inside the environment, starting in `cwd`.
    /// The caller adds its streams, variables and process group.
    fn command(&self, argv: &[&str], cwd: &Path) -> Result<tokio::process::Command, EnvError>;

    /// A one-line description for the model's prompt and `hermes doctor`.
    fn describe(&self) -> String;

    /// The long-lived shells that start commands quickly here, where
    /// starting a process from outside is slow (see [`Launchers`]).
    fn launchers(&self) -> Option<&Launchers> {
        None
    }
}

/// The environment `settings` name, with `hermes_home` for the sandbox's
/// per-session scratch space and `home` for credential paths to hide;
/// `task` keys the docker container (`default` for the main sessions);
/// `workspace` is the sandbox's one writable directory; `hidden` names the
/// variables (credentials) its long-lived shells must never carry.
pub fn from_settings(
    settings: &TerminalSettings,
    hermes_home: &Path,
    home: Option<&Path>,
    session_id: &str,
    task: &str,
    workspace: &Path,
    hidden: &[String],
) -> Result<Arc<dyn Environment>, EnvError> {
    let hidden = hidden.to_vec();
    match &settings.backend {
        Backend::Local => Ok(Arc::new(Local::default().hiding_env(hidden))),
        Backend::Sandbox { network } => {
            let options = SandboxOptions {
                network: *network,
                workspace: workspace.to_path_buf(),
                scratch: hermes_home
                    .join("sandboxes")
                    .join("sandbox")
                    .join(safe_name(session_id)),
                hidden: sandbox::hidden_paths(hermes_home, home),
            };
            Ok(Arc::new(Sandbox::new(options)?.hiding_env(hidden)))
        }
        Backend::Ssh(ssh) => Ok(Arc::new(Ssh::new(ssh.clone())?.hiding_env(hidden))),
        Backend::Docker(docker) => {
            let env = Docker::new(docker.clone(), hermes_home, task)?.hiding_env(hidden);
            env.reap();
            Ok(Arc::new(env))
        }
        Backend::Unavailable(name) => Err(EnvError::Unavailable {
            backend: name.clone(),
        }),
    }
}

/// `session_id` as one path component.
pub(crate) fn safe_name(session_id: &str) -> String {
    let cleaned: String = session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "default".to_owned()
    } else {
        cleaned
    }
}

/// The local host: what every session gets unless configured otherwise.
pub fn local() -> Arc<dyn Environment> {
    Arc::new(Local::default())
}
