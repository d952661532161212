//! The session's terminal environment (`terminal.backend`): built from
//! config, probed once (`uname -a`, `whoami`, `pwd` there) so the model is
//! told where its commands run and uses that machine's paths. A backend
//! that cannot be built or reached stops the session with the reason; it
//! never falls back to running on the host.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub use hermes_env::{Backend, Environment, TerminalSettings};

use crate::error::SessionError;
use crate::setup::Setup;

/// What a session runs its commands in.
pub struct Prepared {
    /// The environment.
    pub env: Arc<dyn Environment>,
    /// The working directory there, when it is not the session's own (ssh).
    pub cwd: Option<PathBuf>,
    /// What the system prompt says about it (none for the host).
    pub hint: Option<String>,
}

/// Distinguishes the sandboxes of one process's sessions.
static SANDBOXES: AtomicU64 = AtomicU64::new(0);

/// The configured environment for a session starting in `cwd`.
pub async fn prepare(setup: &Setup, cwd: &std::path::Path) -> Result<Prepared, SessionError> {
    let settings = TerminalSettings::read(&setup.config.raw, &|name| {
        setup.env.get(name).map(str::to_owned)
    })
    .map_err(SessionError::Setup)?;
    if settings.backend == Backend::Local {
        return Ok(Prepared {
            env: hermes_env::local(),
            cwd: None,
            hint: None,
        });
    }
    let scratch = format!(
        "{}-{}",
        std::process::id(),
        SANDBOXES.fetch_add(1, Ordering::Relaxed)
    );
    let home = setup.env.get("HOME").map(PathBuf::from);
    let env = hermes_env::from_settings(
        &settings,
        setup.home.root(),
        home.as_deref(),
        &scratch,
        "default",
        cwd,
        &crate::secrets::credential_vars(setup),
    )
    .map_err(|e| SessionError::Setup(e.to_string()))?;
    let remote_cwd = match &settings.backend {
        Backend::Ssh(ssh) => Some(PathBuf::from(ssh.cwd.clone().unwrap_or_else(|| "~".into()))),
        Backend::Docker(_) => Some(PathBuf::from("/workspace")),
        _ => None,
    };
    let probe_dir = remote_cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    // Labelled lines: a missing tool (no `whoami` in a minimal image) leaves
    // its own value empty without shifting the others.
    let script = "echo \"uname=$(uname -a 2>/dev/null)\"; \
                  echo \"user=$(id -un 2>/dev/null || whoami 2>/dev/null || id -u 2>/dev/null)\"; \
                  echo \"pwd=$(pwd)\"";
    let probe = hermes_env::files::run(
        env.as_ref(),
        &["sh", "-c", script],
        &probe_dir,
        None,
        Duration::from_secs(30),
    )
    .await
    .map_err(|e| SessionError::Setup(format!("terminal.backend: {}: {e}", env.kind())))?;
    if probe.status != 0 {
        return Err(SessionError::Setup(format!(
            "terminal.backend: {}: the environment did not start ({})",
            env.kind(),
            probe.stderr
        )));
    }
    let text = String::from_utf8_lossy(&probe.stdout).into_owned();
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
            .unwrap_or("")
            .trim()
            .to_owned()
    };
    let (uname, user, pwd) = (field("uname"), field("user"), field("pwd"));
    let hint = format!(
        "## Where commands run\n{}.\nProbed there: `uname -a` → {uname}; user {user}; working \
         directory {pwd}. The terminal and the file tools (read_file, write_file, patch, \
         search_files) act on that machine: use its paths, not this one's.",
        env.describe()
    );
    Ok(Prepared {
        cwd: remote_cwd.map(|configured| {
            if pwd.is_empty() {
                configured
            } else {
                PathBuf::from(&pwd)
            }
        }),
        env,
        hint: Some(hint),
    })
}

/// A subagent's environment: its own container under the docker backend (as
/// the reference gives each task one), its parent's otherwise.
pub(crate) fn for_subagent(
    setup: &Setup,
    parent: &Arc<dyn Environment>,
    task: &str,
) -> Arc<dyn Environment> {
    if parent.kind() != "docker" {
        return parent.clone();
    }
    let Ok(settings) = TerminalSettings::read(&setup.config.raw, &|name| {
        setup.env.get(name).map(str::to_owned)
    }) else {
        return parent.clone();
    };
    let home = setup.env.get("HOME").map(PathBuf::from);
    // Only the docker backend reaches here, and it ignores the workspace.
    let workspace = std::path::Path::new("/workspace");
    hermes_env::from_settings(
        &settings,
        setup.home.root(),
        home.as_deref(),
        task,
        task,
        workspace,
        &crate::secrets::credential_vars(setup),
    )
    .unwrap_or_else(|_| parent.clone())
}

/// What stops the configured terminal backend from running commands now.
pub fn problems(setup: &Setup) -> Vec<String> {
    let read = hermes_env::TerminalSettings::read(&setup.config.raw, &|name| {
        setup.env.get(name).map(str::to_owned)
    });
    match read {
        Err(problem) => vec![problem],
        Ok(settings) => match settings.backend {
            hermes_env::Backend::Docker(docker) => {
                let wanted: Vec<String> = match &docker.cli {
                    Some(cli) => vec![cli.clone()],
                    None => vec!["docker".into(), "podman".into()],
                };
                let path = setup.env.get("PATH").unwrap_or_default().to_owned();
                let engine = docker.cli.is_none()
                    && hermes_env::engine::find_socket(
                        setup.env.get("DOCKER_HOST"),
                        setup.env.get("XDG_RUNTIME_DIR"),
                    )
                    .is_some();
                let found = engine
                    || wanted.iter().any(|name| {
                        std::env::split_paths(&path).any(|dir| dir.join(name).is_file())
                            || std::path::Path::new(name).is_file()
                    });
                if found {
                    Vec::new()
                } else {
                    vec![format!(
                        "terminal.backend is docker but no container engine answers (no engine \
                         socket, and {} is not on PATH): every command will fail until one is \
                         installed (or set terminal.backend local).",
                        wanted.join(" or ")
                    )]
                }
            }
            hermes_env::Backend::Unavailable(name) => vec![format!(
                "terminal.backend '{name}' is not a backend hermes-rs runs commands through \
                 ({}); sessions will not start until it is changed.",
                hermes_state::config_set::BACKENDS.join(", ")
            )],
            _ => Vec::new(),
        },
    }
}
