//! Where a checkpoint store lives and its `git` runs: on this host (the
//! store under `HERMES_HOME`), or inside the session's environment (an SSH
//! host, a container), where the project files are: there the store is
//! `~/.hermes/checkpoints/store` of the environment's user, and every git
//! call and file read is a command run there.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};

use hermes_env::Environment;

/// Variables a store's `git` must not take from the caller.
const UNSET: &[&str] = &[
    "GIT_NAMESPACE",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
];

/// One `git` call on a store.
pub(super) struct GitCall<'a> {
    /// The store (`GIT_DIR`).
    pub store: &'a Path,
    /// The project's tree, when the call reads or writes one.
    pub work: Option<&'a Path>,
    /// The project's index in the store.
    pub index: Option<&'a Path>,
    /// More variables (commit dates).
    pub extra: &'a [(&'a str, &'a str)],
    /// The arguments.
    pub args: &'a [&'a str],
}

/// This host, or an environment the project lives in.
pub(super) enum Site {
    Host,
    Env {
        env: Arc<dyn Environment>,
        /// The environment user's home, asked once.
        home: OnceLock<Result<PathBuf, String>>,
    },
}

impl std::fmt::Debug for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Site::Host => f.write_str("Host"),
            Site::Env { env, .. } => write!(f, "Env({})", env.kind()),
        }
    }
}

/// Output of a finished command, or its error text.
fn finished(out: std::io::Result<std::process::Output>, what: &str) -> Result<String, String> {
    let out = out.map_err(|e| format!("cannot run {what}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `sh -c SCRIPT sh ARGS…` in the environment, fed `input`.
fn sh(
    env: &dyn Environment,
    script: &str,
    args: &[&str],
    input: Option<&[u8]>,
) -> Result<String, String> {
    let mut argv = vec!["sh", "-c", script, "sh"];
    argv.extend_from_slice(args);
    Site::run_there(env, &argv, Path::new("/"), input)
}

impl Site {
    /// A site inside `env`.
    pub(super) fn env(env: Arc<dyn Environment>) -> Self {
        Site::Env {
            env,
            home: OnceLock::new(),
        }
    }

    pub(super) fn is_host(&self) -> bool {
        matches!(self, Site::Host)
    }

    /// `argv` run in the environment from `cwd`, fed `input`.
    fn run_there(
        env: &dyn Environment,
        argv: &[&str],
        cwd: &Path,
        input: Option<&[u8]>,
    ) -> Result<String, String> {
        let mut cmd = env
            .command(argv, cwd)
            .map_err(|e| e.to_string())?
            .into_std();
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let Some(input) = input else {
            cmd.stdin(Stdio::null());
            return finished(cmd.output(), argv[0]);
        };
        cmd.stdin(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", argv[0]))?;
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write;
            stdin
                .write_all(input)
                .map_err(|e| format!("cannot feed {}: {e}", argv[0]))?;
        }
        finished(child.wait_with_output(), argv[0])
    }

    /// The user's home where the store lives (`None` on the host: the
    /// caller knows HERMES_HOME).
    pub(super) fn home(&self) -> Result<Option<PathBuf>, String> {
        match self {
            Site::Host => Ok(None),
            Site::Env { env, home } => home
                .get_or_init(|| {
                    let found = sh(env.as_ref(), "printf %s \"$HOME\"", &[], None)?;
                    let found = found.trim();
                    if found.starts_with('/') {
                        Ok(PathBuf::from(found))
                    } else {
                        Err("the environment has no home directory for checkpoints".into())
                    }
                })
                .clone()
                .map(Some),
        }
    }

    /// Runs one `git` call on a store, isolated from the user's configuration.
    pub(super) fn git(&self, call: &GitCall<'_>) -> Result<String, String> {
        let mut vars: Vec<String> = vec![
            format!("GIT_DIR={}", text(call.store)),
            "GIT_CONFIG_GLOBAL=/dev/null".into(),
            "GIT_CONFIG_SYSTEM=/dev/null".into(),
            "GIT_CONFIG_NOSYSTEM=1".into(),
        ];
        if let Some(work) = call.work {
            vars.push(format!("GIT_WORK_TREE={}", text(work)));
        }
        if let Some(index) = call.index {
            vars.push(format!("GIT_INDEX_FILE={}", text(index)));
        }
        vars.extend(call.extra.iter().map(|(k, v)| format!("{k}={v}")));
        let cwd = call.work.unwrap_or(call.store);
        match self {
            Site::Host => {
                let mut cmd = Command::new("git");
                for name in UNSET {
                    cmd.env_remove(name);
                }
                for var in &vars {
                    if let Some((k, v)) = var.split_once('=') {
                        cmd.env(k, v);
                    }
                }
                cmd.args(call.args).current_dir(cwd).stdin(Stdio::null());
                finished(cmd.output(), "git")
            }
            Site::Env { env, .. } => {
                // `env` sets and clears variables however the environment
                // starts processes (ssh passes none of ours).
                let mut argv: Vec<&str> = vec!["env"];
                for name in UNSET {
                    argv.extend(["-u", name]);
                }
                argv.extend(vars.iter().map(String::as_str));
                argv.push("git");
                argv.extend_from_slice(call.args);
                Self::run_there(env.as_ref(), &argv, cwd, None)
            }
        }
    }

    /// Makes a bare store at `store`.
    pub(super) fn init_bare(&self, store: &Path) -> Result<(), String> {
        self.mkdirs(store)?;
        let mut cmd_args = vec!["init", "--bare", "--quiet"];
        let store_text = text(store);
        cmd_args.push(&store_text);
        match self {
            Site::Host => {
                let mut cmd = Command::new("git");
                for name in UNSET.iter().chain(["GIT_DIR"].iter()) {
                    cmd.env_remove(name);
                }
                finished(cmd.args(&cmd_args).stdin(Stdio::null()).output(), "git").map(|_| ())
            }
            Site::Env { env, .. } => {
                let mut argv = vec!["env", "-u", "GIT_DIR", "git"];
                argv.extend(cmd_args);
                Self::run_there(env.as_ref(), &argv, Path::new("/"), None).map(|_| ())
            }
        }
    }

    pub(super) fn is_file(&self, path: &Path) -> bool {
        match self {
            Site::Host => path.is_file(),
            Site::Env { env, .. } => {
                sh(env.as_ref(), "test -f \"$1\"", &[&text(path)], None).is_ok()
            }
        }
    }

    pub(super) fn mkdirs(&self, path: &Path) -> Result<(), String> {
        match self {
            Site::Host => std::fs::create_dir_all(path).map_err(|e| e.to_string()),
            Site::Env { env, .. } => {
                sh(env.as_ref(), "mkdir -p \"$1\"", &[&text(path)], None).map(|_| ())
            }
        }
    }

    pub(super) fn read(&self, path: &Path) -> Option<String> {
        match self {
            Site::Host => std::fs::read_to_string(path).ok(),
            Site::Env { env, .. } => sh(env.as_ref(), "cat \"$1\"", &[&text(path)], None).ok(),
        }
    }

    pub(super) fn write(&self, path: &Path, body: &str) -> Result<(), String> {
        match self {
            Site::Host => {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                }
                std::fs::write(path, body).map_err(|e| e.to_string())
            }
            Site::Env { env, .. } => sh(
                env.as_ref(),
                "mkdir -p \"$(dirname \"$1\")\" && cat > \"$1\"",
                &[&text(path)],
                Some(body.as_bytes()),
            )
            .map(|_| ()),
        }
    }

    /// The `*.json` files of `dir` as (file stem, text).
    pub(super) fn json_files(&self, dir: &Path) -> Vec<(String, String)> {
        match self {
            Site::Host => std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .filter_map(|e| {
                    let stem = e.path().file_stem()?.to_string_lossy().into_owned();
                    Some((stem, std::fs::read_to_string(e.path()).ok()?))
                })
                .collect(),
            Site::Env { env, .. } => {
                let listing = sh(
                    env.as_ref(),
                        "for f in \"$1\"/*.json; do [ -f \"$f\" ] || continue; \
                         printf '%s\\0' \"$(basename \"$f\" .json)\"; cat \"$f\"; printf '\\0'; done",
                        &[&text(dir)],
                        None,
                    )
                    .unwrap_or_default();
                let parts: Vec<&str> = listing.split('\0').collect();
                parts
                    .chunks(2)
                    .filter(|pair| pair.len() == 2 && !pair[0].is_empty())
                    .map(|pair| (pair[0].to_owned(), pair[1].to_owned()))
                    .collect()
            }
        }
    }

    /// The directory with links resolved; `None` when it is not one.
    pub(super) fn canonical_dir(&self, dir: &Path) -> Option<PathBuf> {
        match self {
            Site::Host => dir.canonicalize().ok().filter(|d| d.is_dir()),
            Site::Env { env, .. } => sh(
                env.as_ref(),
                "cd \"$1\" 2>/dev/null && pwd -P",
                &[&text(dir)],
                None,
            )
            .ok()
            .map(|p| PathBuf::from(p.trim_end_matches('\n')))
            .filter(|p| p.is_absolute()),
        }
    }

    /// How many entries `dir` holds, counting up to `stop_at`.
    pub(super) fn entries_up_to(&self, dir: &Path, stop_at: usize) -> usize {
        match self {
            Site::Host => super::count_entries(dir, stop_at),
            Site::Env { env, .. } => sh(
                env.as_ref(),
                "find \"$1\" -mindepth 1 2>/dev/null | head -n \"$2\" | wc -l",
                &[&text(dir), &stop_at.to_string()],
                None,
            )
            .ok()
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(stop_at),
        }
    }

    /// The project root for `path` (the nearest parent holding one of
    /// `markers`, else the file's own directory), looked up where it is.
    pub(super) fn project_root(&self, path: &Path, markers: &[&str]) -> PathBuf {
        match self {
            Site::Host => super::project_dir(path),
            Site::Env { env, .. } => {
                let mut args = vec![text(path)];
                args.extend(markers.iter().map(|m| (*m).to_owned()));
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                let script = "p=$1; shift; [ -d \"$p\" ] || p=$(dirname \"$p\"); start=$p; \
                     while :; do for m in \"$@\"; do \
                     if [ -e \"$p/$m\" ]; then printf %s \"$p\"; exit 0; fi; done; \
                     up=$(dirname \"$p\"); if [ \"$up\" = / ] || [ \"$up\" = \"$p\" ]; then break; fi; \
                     p=$up; done; printf %s \"$start\"";
                sh(env.as_ref(), script, &refs, None)
                    .ok()
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .unwrap_or_else(|| path.parent().unwrap_or(path).to_path_buf())
            }
        }
    }
}
