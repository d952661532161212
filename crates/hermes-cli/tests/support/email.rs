//! Real mail servers on loopback for the email tests (`fixtures/mail_server.py`:
//! Debian's Dovecot for IMAP, aiosmtpd for SMTP; `HERMES_MAIL_PYTHON` names a
//! Python with aiosmtpd, as `.ci/run` installs it) and a person's mail client
//! (`fixtures/mail_client.py`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Sandbox, fixture, free_port};

/// The running servers; stopped on drop.
pub struct MailServers {
    child: Child,
    python: std::path::PathBuf,
    pub imap_port: u16,
    pub smtp_port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for MailServers {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

impl MailServers {
    /// Starts them with mailboxes bot, ann and stranger (`<name>-pass`), or
    /// `None` when `HERMES_MAIL_PYTHON` is not set.
    pub fn start() -> Option<Self> {
        let python = std::path::PathBuf::from(std::env::var_os("HERMES_MAIL_PYTHON")?);
        let dir = tempfile::tempdir().unwrap();
        let (imap_port, smtp_port) = (free_port(), free_port());
        let mut child = Command::new(&python)
            .arg(fixture("mail_server.py"))
            .arg(dir.path())
            .args([imap_port.to_string(), smtp_port.to_string()])
            .args(["bot:bot-pass", "ann:ann-pass", "stranger:stranger-pass"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "the mail servers did not start");
        Some(Self {
            child,
            python,
            imap_port,
            smtp_port,
            _dir: dir,
        })
    }

    /// Points the sandbox's gateway at these servers as bot@hermes.test.
    pub fn configure(&self, sb: &Sandbox) {
        sb.no_retries();
        sb.add_config(
            "platforms:\n  email:\n    extra:\n      imap_tls: none\n      smtp_tls: none\n",
        );
    }

    /// The gateway's environment for the bot's account.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("EMAIL_ADDRESS", "bot@hermes.test".to_owned()),
            ("EMAIL_PASSWORD", "bot-pass".to_owned()),
            ("EMAIL_IMAP_HOST", "127.0.0.1".to_owned()),
            ("EMAIL_IMAP_PORT", self.imap_port.to_string()),
            ("EMAIL_SMTP_HOST", "127.0.0.1".to_owned()),
            ("EMAIL_SMTP_PORT", self.smtp_port.to_string()),
            ("EMAIL_ALLOWED_USERS", "ann@hermes.test".to_owned()),
        ]
    }

    /// Sends mail as `login` (None: without logging in); its Message-ID.
    pub fn send(&self, login: Option<&str>, spec: Value) -> String {
        let mut spec = spec;
        if let Some(user) = login {
            spec["login"] = json!(user);
            spec["password"] = json!(format!("{user}-pass"));
        }
        spec["to"] = spec.get("to").cloned().unwrap_or(json!("bot@hermes.test"));
        let out = Command::new(&self.python)
            .arg(fixture("mail_client.py"))
            .args(["send", &self.smtp_port.to_string(), &spec.to_string()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// The messages in `user`'s INBOX.
    pub fn inbox(&self, user: &str) -> Vec<Value> {
        let out = Command::new(&self.python)
            .arg(fixture("mail_client.py"))
            .args([
                "list",
                &self.imap_port.to_string(),
                user,
                &format!("{user}-pass"),
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// Waits for a message in `user`'s INBOX whose text satisfies `want`.
    pub fn wait_for(&self, user: &str, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let all = self.inbox(user);
            if let Some(found) = all.iter().find(|m| want(m)) {
                return found.clone();
            }
            assert!(Instant::now() < deadline, "no mail {what}: {all:#?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
