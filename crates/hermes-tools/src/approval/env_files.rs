//! The gate's view of files in another environment (an SSH host, a
//! container): a script a command runs there is read there, with one short
//! command, before the command itself runs.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use hermes_env::Environment;

use super::{HostFile, HostFiles};

/// Exit codes of the read script: nothing there, not a file, too large.
const MISSING: i32 = 3;
const NOT_FILE: i32 = 4;
const TOO_LARGE: i32 = 5;

/// Files read by commands run in an environment.
pub struct EnvFiles(pub Arc<dyn Environment>);

impl EnvFiles {
    fn run(&self, script: &str, args: &[&str]) -> Option<std::process::Output> {
        let mut argv = vec!["sh", "-c", script, "sh"];
        argv.extend_from_slice(args);
        let mut cmd = self.0.command(&argv, Path::new("/")).ok()?.into_std();
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        cmd.output().ok()
    }
}

impl HostFiles for EnvFiles {
    fn read(&self, path: &Path, max: u64) -> HostFile {
        let script = "f=$1; [ -e \"$f\" ] || exit 3; [ -f \"$f\" ] || exit 4; \
                      n=$(wc -c < \"$f\") || exit 6; [ \"$n\" -le \"$2\" ] || exit 5; cat \"$f\"";
        let path = path.to_string_lossy();
        let Some(out) = self.run(script, &[&path, &max.to_string()]) else {
            return HostFile::Unreadable;
        };
        match out.status.code() {
            Some(0) => HostFile::Bytes(out.stdout),
            Some(MISSING) => HostFile::Missing,
            Some(NOT_FILE) => HostFile::NotFile,
            Some(TOO_LARGE) => HostFile::TooLarge,
            _ => HostFile::Unreadable,
        }
    }

    fn list(&self, dir: &Path) -> Option<Vec<String>> {
        let dir = dir.to_string_lossy();
        let out = self.run("ls -1A -- \"$1\"", &[&dir])?;
        out.status.success().then(|| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_owned)
                .collect()
        })
    }
}
