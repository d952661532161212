//! `terminal.backend: ssh`: commands run on another host through the system
//! `ssh`, one connection reused (a control master), never asking for a
//! password, accepting a new host key once and refusing a changed one. A
//! broken connection is an error the model and the user see; nothing ever
//! runs locally instead.

use std::path::{Path, PathBuf};

use crate::settings::SshSettings;
use crate::{EnvError, Environment};

/// The SSH host.
#[derive(Debug)]
pub struct Ssh {
    settings: SshSettings,
    ssh: PathBuf,
    /// The control master's socket (short: socket paths are limited).
    control: PathBuf,
    /// Shells kept running there to start commands.
    launchers: crate::Launchers,
}

/// Exit status `ssh` uses for its own failures (connection, authentication).
pub const SSH_FAILURE: i32 = 255;

impl Ssh {
    /// An SSH environment; an error naming the package when `ssh` is missing.
    pub fn new(settings: SshSettings) -> Result<Self, EnvError> {
        let ssh = crate::sandbox::find_program("ssh").ok_or(EnvError::Missing {
            backend: "ssh",
            program: "ssh",
            hint: "install the OpenSSH client (Debian/Ubuntu: apt install openssh-client)",
        })?;
        let control = std::env::temp_dir().join(format!(
            "hermes-ssh-{}-{}",
            std::process::id(),
            short_hash(&format!(
                "{}@{}:{}",
                settings.user, settings.host, settings.port
            ))
        ));
        Ok(Self {
            settings,
            ssh,
            control,
            launchers: crate::Launchers::new(),
        })
    }

    /// Options every connection gets.
    fn options(&self) -> Vec<String> {
        let s = &self.settings;
        let mut args: Vec<String> = vec![
            "-o".into(),
            "BatchMode=yes".into(),
            "-o".into(),
            "StrictHostKeyChecking=accept-new".into(),
            "-o".into(),
            format!("ConnectTimeout={}", s.connect_timeout),
            "-o".into(),
            "ControlMaster=auto".into(),
            "-o".into(),
            format!("ControlPath={}", self.control.display()),
            "-o".into(),
            "ControlPersist=300".into(),
            "-o".into(),
            "ServerAliveInterval=15".into(),
            "-o".into(),
            "ServerAliveCountMax=2".into(),
            "-p".into(),
            s.port.to_string(),
            "-l".into(),
            s.user.clone(),
        ];
        if let Some(key) = &s.key {
            args.extend([
                "-i".into(),
                key.clone(),
                "-o".into(),
                "IdentitiesOnly=yes".into(),
            ]);
        }
        args
    }

    /// The remote shell line that runs `argv` in `cwd`.
    fn remote_line(&self, argv: &[&str], cwd: &Path) -> Result<String, EnvError> {
        let quote = |w: &str| {
            shlex::try_quote(w)
                .map(|q| q.into_owned())
                .map_err(|_| EnvError::Io("a command word holds a NUL byte".into()))
        };
        let words: Result<Vec<String>, EnvError> = argv.iter().map(|w| quote(w)).collect();
        let words = words?.join(" ");
        let dir = cwd.to_string_lossy();
        Ok(if dir.is_empty() || dir == "~" {
            format!("exec {words}")
        } else if let Some(rest) = dir.strip_prefix("~/") {
            // `~` must stay outside the quotes for the remote shell to expand it.
            format!("cd ~/{} && exec {words}", quote(rest)?)
        } else {
            format!("cd {} && exec {words}", quote(&dir)?)
        })
    }

    /// Closes the control master (the next command connects afresh).
    pub fn close(&self) {
        let _ = std::process::Command::new(&self.ssh)
            .args(self.options())
            .args(["-O", "exit", &self.settings.host])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }

    /// The remote working directory the configuration names, if any.
    pub fn remote_cwd(&self) -> Option<&str> {
        self.settings.cwd.as_deref()
    }
}

impl Drop for Ssh {
    fn drop(&mut self) {
        self.close();
    }
}

impl Ssh {
    /// Keeps the variables `names` (credentials) out of every long-lived
    /// shell this environment starts.
    pub fn hiding_env(mut self, names: Vec<String>) -> Self {
        self.launchers = crate::Launchers::hiding(names);
        self
    }
}

impl Environment for Ssh {
    fn kind(&self) -> &'static str {
        "ssh"
    }

    fn is_host(&self) -> bool {
        false
    }

    fn command(&self, argv: &[&str], cwd: &Path) -> Result<tokio::process::Command, EnvError> {
        let line = self.remote_line(argv, cwd)?;
        let mut cmd = tokio::process::Command::new(&self.ssh);
        cmd.args(self.options())
            .arg(&self.settings.host)
            .arg("--")
            .arg(line);
        Ok(cmd)
    }

    fn launchers(&self) -> Option<&crate::Launchers> {
        Some(&self.launchers)
    }

    fn describe(&self) -> String {
        format!(
            "ssh: commands and file tools run on {}@{}:{} (not this machine)",
            self.settings.user, self.settings.host, self.settings.port
        )
    }
}

fn short_hash(text: &str) -> String {
    // FNV-1a: enough to keep two hosts' sockets apart.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", hash as u32)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ssh() -> Ssh {
        Ssh {
            settings: SshSettings {
                host: "box".into(),
                user: "me".into(),
                port: 22,
                key: None,
                cwd: None,
                connect_timeout: 10,
            },
            ssh: PathBuf::from("ssh"),
            control: PathBuf::from("/tmp/ctl"),
            launchers: crate::Launchers::new(),
        }
    }

    #[test]
    fn the_remote_line_quotes_words_and_keeps_the_tilde() {
        let s = ssh();
        let argv = ["bash", "-c", "echo 'a b' $HOME"];
        assert_eq!(
            s.remote_line(&argv, Path::new("/srv/my project")).unwrap(),
            "cd '/srv/my project' && exec bash -c \"echo 'a b' \"'$HOME'"
        );
        assert_eq!(
            s.remote_line(&["pwd"], Path::new("~/work dir")).unwrap(),
            "cd ~/'work dir' && exec pwd"
        );
        assert_eq!(s.remote_line(&["pwd"], Path::new("~")).unwrap(), "exec pwd");
    }
}
