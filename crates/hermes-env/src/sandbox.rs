//! `terminal.backend: sandbox` (ours): the host inside a bubblewrap box.
//! The system is read-only, the session's working directory (the workspace,
//! fixed when the box is made — a command's `workdir` cannot widen it) is
//! writable, `/tmp` is private to the session (kept between
//! its commands), Hermes' secrets and the user's credential directories are
//! hidden, and the network is off unless `terminal.sandbox_network: true`.

use std::path::{Path, PathBuf};

use crate::{EnvError, Environment};

/// What the box allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxOptions {
    /// Keep the host's network (`terminal.sandbox_network`).
    pub network: bool,
    /// The one writable directory (the session's working directory).
    pub workspace: PathBuf,
    /// The session's private `/tmp`, on the host.
    pub scratch: PathBuf,
    /// Files and directories the box must not see.
    pub hidden: Vec<PathBuf>,
}

/// The bubblewrap box.
#[derive(Debug)]
pub struct Sandbox {
    options: SandboxOptions,
    bwrap: PathBuf,
    /// The box commands join, where this process may hold one.
    held: Option<crate::held_box::HeldBox>,
    /// Shells kept running in the box to start commands.
    launchers: crate::Launchers,
}

/// Credential files and directories under `$HOME` no command in the box sees.
const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".azure",
    ".config/gh",
    ".config/gcloud",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
];

/// Hermes' own secrets and session history.
const HERMES_SECRETS: &[&str] = &[
    ".env",
    "auth.json",
    "state.db",
    "state.db-wal",
    "state.db-shm",
    ".anthropic_oauth.json",
    "mcp-tokens",
    "pairing",
];

/// What the box hides for `hermes_home` and `home`.
pub(crate) fn hidden_paths(hermes_home: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = HERMES_SECRETS.iter().map(|n| hermes_home.join(n)).collect();
    if let Some(home) = home {
        out.extend(HOME_SECRETS.iter().map(|n| home.join(n)));
    }
    out.push(PathBuf::from("/root/.ssh"));
    out
}

impl Sandbox {
    /// A box with `options`; an error naming the package when `bwrap` is missing.
    pub fn new(options: SandboxOptions) -> Result<Self, EnvError> {
        let bwrap = find_program("bwrap").ok_or(EnvError::Missing {
            backend: "sandbox",
            program: "bwrap",
            hint: "install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install \
                   bubblewrap), or set terminal.backend: local",
        })?;
        Ok(Self {
            options,
            bwrap,
            held: crate::held_box::HeldBox::available(),
            launchers: crate::Launchers::new(),
        })
    }

    /// bwrap's arguments for a command starting in `cwd`.
    fn arguments(&self, cwd: &Path) -> Result<Vec<String>, EnvError> {
        std::fs::create_dir_all(&self.options.scratch).map_err(|e| {
            EnvError::Io(format!(
                "cannot create the sandbox's /tmp at {}: {e}",
                self.options.scratch.display()
            ))
        })?;
        let text = |p: &Path| p.to_string_lossy().into_owned();
        let mut args: Vec<String> = vec![
            "--ro-bind".into(),
            "/".into(),
            "/".into(),
            "--dev".into(),
            "/dev".into(),
            "--proc".into(),
            "/proc".into(),
            // The private /tmp first: a workspace under /tmp is bound over it.
            "--bind".into(),
            text(&self.options.scratch),
            "/tmp".into(),
            "--bind".into(),
            text(&self.options.workspace),
            text(&self.options.workspace),
        ];
        for path in &self.options.hidden {
            match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.is_dir() => {
                    args.extend(["--tmpfs".into(), text(path)]);
                }
                Ok(_) => {
                    args.extend(["--ro-bind".into(), "/dev/null".into(), text(path)]);
                }
                Err(_) => {}
            }
        }
        if !self.options.network {
            args.push("--unshare-net".into());
        }
        args.extend([
            "--unshare-pid".into(),
            "--die-with-parent".into(),
            "--chdir".into(),
            text(cwd),
            "--".into(),
        ]);
        Ok(args)
    }
}

impl Sandbox {
    /// Keeps the variables `names` (credentials) out of every long-lived
    /// shell this environment starts.
    pub fn hiding_env(mut self, names: Vec<String>) -> Self {
        self.launchers = crate::Launchers::hiding(names);
        self
    }
}

impl Environment for Sandbox {
    fn kind(&self) -> &'static str {
        "sandbox"
    }

    fn is_host(&self) -> bool {
        false
    }

    fn command(&self, argv: &[&str], cwd: &Path) -> Result<tokio::process::Command, EnvError> {
        if let Some(held) = &self.held {
            let workspace = self.options.workspace.clone();
            let (program, args) = held.enter(&self.bwrap, || self.arguments(&workspace), cwd)?;
            // The directory is entered inside the box (`--wd`): it may exist only there.
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(args).args(argv);
            return Ok(cmd);
        }
        let mut cmd = tokio::process::Command::new(&self.bwrap);
        cmd.args(self.arguments(cwd)?).args(argv);
        Ok(cmd)
    }

    fn launchers(&self) -> Option<&crate::Launchers> {
        Some(&self.launchers)
    }

    fn describe(&self) -> String {
        format!(
            "sandbox: this machine inside a bubblewrap box — the system is read-only, only the \
             working directory is writable, /tmp is private, credentials are hidden, network {}",
            if self.options.network { "on" } else { "off" }
        )
    }
}

/// `program` on `PATH`.
pub(crate) fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}
