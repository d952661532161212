//! `terminal.backend: docker`: commands run in a container through the
//! `docker` (or `podman`) command line. One container per task key, shared
//! by the sessions of a process (and found again by its labels when Hermes
//! restarts), hardened as the reference does: every capability dropped but
//! the few package managers need, `no-new-privileges`, a PID limit, a
//! private tmpfs `/tmp`, optional `--network none`, CPU and memory limits.
//! Secrets are passed by name (`-e NAME`, the value inherited), never on a
//! command line. A container that vanished is created again.
//!
//! The engine is reached through its API socket when one answers (Docker's,
//! `DOCKER_HOST=unix://…`, or Podman's compatible socket): containers are
//! made, found and removed by API calls, and each command is an exec driven
//! by a relay process (this binary's `__engine-exec` mode), so it is still a
//! process the terminal can stream, time out and kill. Without a socket (or
//! with `terminal.docker_cli` set) the `docker`/`podman` command line does
//! the same.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::settings::DockerSettings;
use crate::{EnvError, Environment};

/// Capabilities added back after `--cap-drop ALL` (what package installs need).
const CAPABILITIES: &[&str] = &[
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "SETUID",
    "SETGID",
    "KILL",
];

/// Labels every container Hermes makes carries.
pub const LABEL: &str = "hermes.managed";

/// How the engine is reached.
#[derive(Debug, Clone)]
enum Transport {
    /// The `docker` or `podman` command line.
    Cli(PathBuf),
    /// The Engine API; commands through the relay (this binary).
    Api {
        engine: crate::engine::Engine,
        relay: PathBuf,
    },
}

/// The container of one task key.
#[derive(Debug)]
pub struct Docker {
    settings: DockerSettings,
    transport: Transport,
    name: String,
    /// Host directory mounted at `/workspace` when persistent.
    persistent_dir: Option<PathBuf>,
    /// Shells kept running there to start commands.
    launchers: crate::Launchers,
}

impl Docker {
    /// The container for `task` (`default` for the main sessions), run by
    /// the engine [`pick_cli`] chooses; an error naming the package when
    /// neither `docker` nor `podman` is installed.
    pub fn new(settings: DockerSettings, hermes_home: &Path, task: &str) -> Result<Self, EnvError> {
        let transport = match api_transport(&settings) {
            Some(api) => api,
            None => Transport::Cli(pick_cli(settings.cli.as_deref())?),
        };
        let home_tag = short_tag(&hermes_home.to_string_lossy());
        let name = format!("hermes-{home_tag}-{}", crate::safe_name(task));
        let persistent_dir = settings.persistent.then(|| {
            hermes_home
                .join("sandboxes")
                .join("docker")
                .join(crate::safe_name(task))
        });
        Ok(Self {
            settings,
            transport,
            name,
            persistent_dir,
            launchers: crate::Launchers::new(),
        })
    }

    /// `docker run` arguments that create the container.
    pub fn run_args(&self) -> Vec<String> {
        let s = &self.settings;
        let mut args: Vec<String> = vec![
            "run".into(),
            "-d".into(),
            "--name".into(),
            self.name.clone(),
            "--label".into(),
            format!("{LABEL}=1"),
            "--label".into(),
            format!("hermes.container={}", self.name),
            "--cap-drop".into(),
            "ALL".into(),
        ];
        for cap in CAPABILITIES {
            args.extend(["--cap-add".into(), (*cap).to_owned()]);
        }
        args.extend([
            "--security-opt".into(),
            "no-new-privileges".into(),
            "--pids-limit".into(),
            "512".into(),
            "--tmpfs".into(),
            "/tmp:rw,nosuid,size=512m".into(),
        ]);
        if !s.network {
            args.extend(["--network".into(), "none".into()]);
        }
        if s.cpu > 0.0 {
            args.extend(["--cpus".into(), format!("{}", s.cpu)]);
        }
        if s.memory_mb > 0 {
            args.extend(["--memory".into(), format!("{}m", s.memory_mb)]);
        }
        if let Some(dir) = &self.persistent_dir {
            args.extend(["-v".into(), format!("{}:/workspace", dir.display())]);
        }
        for volume in &s.volumes {
            args.extend(["-v".into(), volume.clone()]);
        }
        for (key, value) in &s.env {
            // Literal configured values are not secrets; forwarded ones go by name.
            args.extend(["-e".into(), format!("{key}={value}")]);
        }
        args.extend([
            "-w".into(),
            "/workspace".into(),
            s.image.clone(),
            "sleep".into(),
            "infinity".into(),
        ]);
        args
    }

    /// `docker exec` arguments that run `argv` in `cwd`.
    pub fn exec_args(&self, argv: &[&str], cwd: &Path) -> Vec<String> {
        let mut args: Vec<String> = vec!["exec".into(), "-i".into()];
        let dir = cwd.to_string_lossy();
        if !dir.is_empty() {
            args.extend(["-w".into(), dir.into_owned()]);
        }
        for name in &self.settings.forward_env {
            args.extend(["-e".into(), name.clone()]);
        }
        args.push(self.name.clone());
        args.extend(argv.iter().map(|a| (*a).to_owned()));
        args
    }

    /// Makes sure the container runs: reuses a running one (also one a
    /// previous Hermes left), replaces an exited one, creates a missing one.
    fn ensure(&self) -> Result<(), EnvError> {
        if let Some(dir) = &self.persistent_dir {
            std::fs::create_dir_all(dir).map_err(|e| {
                EnvError::Io(format!("docker: cannot create {}: {e}", dir.display()))
            })?;
        }
        match &self.transport {
            Transport::Cli(cli) => self.ensure_by_cli(cli),
            Transport::Api { engine, .. } => self.ensure_by_api(engine),
        }
    }

    fn ensure_by_api(&self, engine: &crate::engine::Engine) -> Result<(), EnvError> {
        let unreachable = |e: String| {
            EnvError::Unreachable(format!(
                "docker: {e}. Nothing was run locally; check that the engine runs and \
                 terminal.docker_image."
            ))
        };
        match engine.running(&self.name).map_err(unreachable)? {
            Some(true) => return Ok(()),
            Some(false) => engine.remove(&self.name).map_err(unreachable)?,
            None => {}
        }
        let spec = crate::engine::container_spec(
            &self.settings,
            &self.name,
            LABEL,
            CAPABILITIES,
            self.persistent_dir.as_deref(),
        );
        engine
            .create_and_start(&self.name, &spec)
            .map_err(unreachable)
    }

    fn ensure_by_cli(&self, cli: &Path) -> Result<(), EnvError> {
        let state = std::process::Command::new(cli)
            .args(["inspect", "-f", "{{.State.Running}}", &self.name])
            .stderr(Stdio::null())
            .output()
            .map_err(|e| EnvError::Io(format!("docker: {e}")))?;
        match String::from_utf8_lossy(&state.stdout).trim() {
            "true" => return Ok(()),
            "false" => {
                let _ = std::process::Command::new(cli)
                    .args(["rm", "-f", &self.name])
                    .output();
            }
            _ => {}
        }
        let created = std::process::Command::new(cli)
            .args(self.run_args())
            .output()
            .map_err(|e| EnvError::Io(format!("docker: {e}")))?;
        if !created.status.success() {
            return Err(EnvError::Unreachable(format!(
                "docker: cannot start a container from {} ({}). Nothing was run locally; check \
                 that the engine runs ({} info) and terminal.docker_image.",
                self.settings.image,
                String::from_utf8_lossy(&created.stderr).trim(),
                cli.display()
            )));
        }
        Ok(())
    }

    /// Removes this container now, running or not (its shells go with it).
    pub fn remove(&self) {
        match &self.transport {
            Transport::Api { engine, .. } => {
                let _ = engine.remove(&self.name);
            }
            Transport::Cli(cli) => {
                let run = |args: &[&str]| {
                    let _ = std::process::Command::new(cli)
                        .args(args)
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .output();
                };
                // `sleep` as PID 1 ignores SIGTERM: kill first, or `rm -f` waits.
                run(&["kill", &self.name]);
                run(&["rm", "-f", &self.name]);
            }
        }
    }

    /// Removes exited containers Hermes made (found by label).
    pub fn reap(&self) {
        let cli = match &self.transport {
            Transport::Api { engine, .. } => {
                for id in engine.exited_with_label(LABEL).unwrap_or_default() {
                    let _ = engine.remove(&id);
                }
                return;
            }
            Transport::Cli(cli) => cli,
        };
        let listed = std::process::Command::new(cli)
            .args([
                "ps",
                "-a",
                "-q",
                "--filter",
                &format!("label={LABEL}=1"),
                "--filter",
                "status=exited",
            ])
            .output();
        if let Ok(out) = listed {
            for id in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = std::process::Command::new(cli).args(["rm", id]).output();
            }
        }
    }
}

impl Docker {
    /// Keeps the variables `names` (credentials) out of every long-lived
    /// shell this environment starts.
    pub fn hiding_env(mut self, names: Vec<String>) -> Self {
        self.launchers = crate::Launchers::hiding(names);
        self
    }
}

impl Environment for Docker {
    fn kind(&self) -> &'static str {
        "docker"
    }

    fn is_host(&self) -> bool {
        false
    }

    fn command(&self, argv: &[&str], cwd: &Path) -> Result<tokio::process::Command, EnvError> {
        self.ensure()?;
        match &self.transport {
            Transport::Cli(cli) => {
                let mut cmd = tokio::process::Command::new(cli);
                cmd.args(self.exec_args(argv, cwd));
                Ok(cmd)
            }
            Transport::Api { engine, relay } => {
                let dir = cwd.to_string_lossy();
                let exec = crate::engine::relay::Exec {
                    socket: engine.socket().to_path_buf(),
                    container: self.name.clone(),
                    cwd: (!dir.is_empty()).then(|| dir.into_owned()),
                    forward: self.settings.forward_env.clone(),
                    argv: argv.iter().map(|a| (*a).to_owned()).collect(),
                };
                let mut cmd = tokio::process::Command::new(relay);
                cmd.arg(crate::engine::relay::MODE).args(exec.to_args());
                Ok(cmd)
            }
        }
    }

    fn launchers(&self) -> Option<&crate::Launchers> {
        Some(&self.launchers)
    }

    fn describe(&self) -> String {
        let through = match &self.transport {
            Transport::Api { engine, .. } => {
                format!("the Engine API at {}", engine.socket().display())
            }
            Transport::Cli(cli) => cli.display().to_string(),
        };
        format!(
            "docker: commands and file tools run in the container {} (image {}, through {}), \
             not on this machine; network {}",
            self.name,
            self.settings.image,
            through,
            if self.settings.network { "on" } else { "off" }
        )
    }
}

/// The engines tried, in order, when none is configured.
/// The Engine API, when an engine's socket answers and this process is the
/// `hermes` binary (its relay mode drives each command); not when a command
/// line is configured (`terminal.docker_cli`).
fn api_transport(settings: &DockerSettings) -> Option<Transport> {
    if settings.cli.is_some() {
        return None;
    }
    let relay = std::env::current_exe()
        .ok()
        .filter(|exe| exe.file_name().is_some_and(|n| n == "hermes"))?;
    let socket = crate::engine::find_socket(
        std::env::var("DOCKER_HOST").ok().as_deref(),
        std::env::var("XDG_RUNTIME_DIR").ok().as_deref(),
    )?;
    Some(Transport::Api {
        engine: crate::engine::Engine::new(socket),
        relay,
    })
}

const ENGINES: &[&str] = &["docker", "podman"];

/// How long `<engine> info` may take before the engine counts as not
/// answering (a wedged daemon must not hang the session's start).
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// The engine that answered, so later sessions of the process skip the
/// probe (a few hundred milliseconds for podman); a failed probe is not
/// remembered, as the engine may be started meanwhile.
static ANSWERED: OnceLock<PathBuf> = OnceLock::new();

/// The engine's command line: `configured` (`terminal.docker_cli` /
/// `HERMES_DOCKER_CLI`) when set; else the first of `docker` and `podman`
/// whose `info` answers, because a machine often has a `docker` client with
/// no daemon beside a working daemonless podman; else the first installed,
/// so the error at the first command says what failed.
fn pick_cli(configured: Option<&str>) -> Result<PathBuf, EnvError> {
    if let Some(name) = configured {
        let path = if name.contains('/') {
            Some(PathBuf::from(name)).filter(|p| p.is_file())
        } else {
            crate::sandbox::find_program(name)
        };
        return path.ok_or_else(|| {
            EnvError::Config(format!(
                "docker: the configured engine `{name}` (terminal.docker_cli or \
                 HERMES_DOCKER_CLI) is not installed. Install it, name another (docker, podman), \
                 or unset it to use whichever answers."
            ))
        });
    }
    if let Some(cli) = ANSWERED.get() {
        return Ok(cli.clone());
    }
    let installed: Vec<PathBuf> = ENGINES
        .iter()
        .filter_map(|e| crate::sandbox::find_program(e))
        .collect();
    if let Some(cli) = installed.iter().find(|cli| answers(cli)) {
        return Ok(ANSWERED.get_or_init(|| cli.clone()).clone());
    }
    installed.into_iter().next().ok_or(EnvError::Missing {
        backend: "docker",
        program: "docker",
        hint: "install Docker or Podman (Debian/Ubuntu: apt install podman), or set \
               terminal.backend: local",
    })
}

/// Whether `<cli> info` succeeds within [`PROBE_TIMEOUT`].
fn answers(cli: &Path) -> bool {
    let Ok(mut child) = std::process::Command::new(cli)
        .arg("info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    let deadline = Instant::now() + PROBE_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

fn short_tag(text: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn settings() -> DockerSettings {
        DockerSettings {
            image: "debian:12".into(),
            volumes: vec!["/data:/data:ro".into()],
            forward_env: vec!["GITHUB_TOKEN".into()],
            env: vec![("LANG".into(), "C.UTF-8".into())],
            cpu: 1.5,
            memory_mb: 2048,
            persistent: true,
            network: false,
            cli: None,
        }
    }

    fn docker(s: DockerSettings) -> Docker {
        Docker {
            name: "hermes-abc-default".into(),
            transport: Transport::Cli(PathBuf::from("docker")),
            persistent_dir: s
                .persistent
                .then(|| PathBuf::from("/h/sandboxes/docker/default")),
            settings: s,
            launchers: crate::Launchers::new(),
        }
    }

    #[test]
    fn the_container_is_hardened_and_labelled() {
        let args = docker(settings()).run_args().join(" ");
        for want in [
            "run -d --name hermes-abc-default",
            "--label hermes.managed=1",
            "--cap-drop ALL",
            "--cap-add CHOWN",
            "--security-opt no-new-privileges",
            "--pids-limit 512",
            "--tmpfs /tmp:rw,nosuid,size=512m",
            "--network none",
            "--cpus 1.5",
            "--memory 2048m",
            "-v /h/sandboxes/docker/default:/workspace",
            "-v /data:/data:ro",
            "-e LANG=C.UTF-8",
            "-w /workspace debian:12 sleep infinity",
        ] {
            assert!(args.contains(want), "{want} not in {args}");
        }
        let mut open = settings();
        open.network = true;
        open.persistent = false;
        let args = docker(open).run_args().join(" ");
        assert!(!args.contains("--network none"), "{args}");
        assert!(!args.contains(":/workspace"), "{args}");
    }

    #[test]
    fn secrets_are_passed_by_name_only() {
        let args = docker(settings()).exec_args(
            &["bash", "-c", "echo $GITHUB_TOKEN"],
            Path::new("/workspace"),
        );
        assert_eq!(
            args,
            [
                "exec",
                "-i",
                "-w",
                "/workspace",
                "-e",
                "GITHUB_TOKEN",
                "hermes-abc-default",
                "bash",
                "-c",
                "echo $GITHUB_TOKEN"
            ]
        );
    }

    #[test]
    fn a_configured_engine_is_used_or_named_in_the_error() {
        assert!(pick_cli(Some("sh")).unwrap().ends_with("sh"));
        assert_eq!(pick_cli(Some("/bin/sh")).unwrap(), PathBuf::from("/bin/sh"));
        let err = pick_cli(Some("no-such-engine")).unwrap_err().to_string();
        assert!(
            err.contains("`no-such-engine`") && err.contains("HERMES_DOCKER_CLI"),
            "{err}"
        );
    }
}
