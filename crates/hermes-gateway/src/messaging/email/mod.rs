//! Email: IMAP in (IDLE, or polling), SMTP out. One conversation per email
//! thread (by `References`/`In-Reply-To`), answers as replies in it, files
//! both ways. Pairing does not fit email (a code mailed to a forgeable From
//! address): only allowlisted senders are answered, and only when the
//! receiving server vouched for their domain. Auto-replies, bounces and
//! list mail are never answered.

mod imap;
mod parse;
mod send;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::config::{boolean, platform_key};
use super::media::{MediaKind, OutgoingFile};
use super::platform::{
    Adapter, Attachment, Batch, BotIdentity, Capabilities, ChatKind, ChatRef, Incoming, Outgoing,
    PlatformError, Sender,
};

/// How a connection is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// TLS from the first byte (IMAPS 993, SMTPS 465).
    Implicit,
    /// Plain, then `STARTTLS` (required).
    StartTls,
    /// No TLS at all (loopback test servers; never chosen by default).
    None,
}

impl TlsMode {
    fn read(value: Option<String>, port: u16, implicit_port: u16) -> Self {
        match value.as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("implicit" | "ssl" | "tls") => Self::Implicit,
            Some("starttls") => Self::StartTls,
            Some("none" | "off" | "plain") => Self::None,
            _ if port == implicit_port => Self::Implicit,
            _ => Self::StartTls,
        }
    }
}

/// The email account.
#[derive(Clone, PartialEq, Eq)]
pub struct EmailSettings {
    /// The bot's address (`EMAIL_ADDRESS`).
    pub address: String,
    /// The login name (`EMAIL_USERNAME`, else the address).
    pub login: String,
    /// `EMAIL_PASSWORD`.
    pub password: String,
    /// `EMAIL_IMAP_HOST` / `EMAIL_IMAP_PORT` (993).
    pub imap_host: String,
    /// IMAP port.
    pub imap_port: u16,
    /// IMAP security (`imap_tls`; implicit on 993, else STARTTLS).
    pub imap_tls: TlsMode,
    /// `EMAIL_SMTP_HOST` / `EMAIL_SMTP_PORT` (587).
    pub smtp_host: String,
    /// SMTP port.
    pub smtp_port: u16,
    /// SMTP security (`smtp_tls`; implicit on 465, else STARTTLS).
    pub smtp_tls: TlsMode,
    /// Wait with IMAP IDLE (`idle`, on by default) rather than polling.
    pub idle: bool,
    /// `EMAIL_POLL_INTERVAL` (15 s) when polling.
    pub poll_interval: Duration,
    /// Answer only senders whose domain the receiving server vouched for
    /// (`EMAIL_TRUST_FROM_HEADER=true` turns this off).
    pub require_authenticated: bool,
    /// Whose `Authentication-Results` count (`EMAIL_AUTHSERV_ID`).
    pub authserv: Option<String>,
}

impl std::fmt::Debug for EmailSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmailSettings")
            .field("address", &self.address)
            .field("imap_host", &self.imap_host)
            .field("smtp_host", &self.smtp_host)
            .finish_non_exhaustive()
    }
}

impl EmailSettings {
    /// The settings, when address, password and both hosts are given.
    pub fn read(tree: &Value, env: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        let get = |var: &str, key: &str| {
            env(var)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .or_else(|| platform_key(tree, "email", key))
        };
        let address = get("EMAIL_ADDRESS", "address")?.to_ascii_lowercase();
        let password = env("EMAIL_PASSWORD").filter(|p| !p.is_empty())?;
        let imap_host = get("EMAIL_IMAP_HOST", "imap_host")?;
        let smtp_host = get("EMAIL_SMTP_HOST", "smtp_host")?;
        let port = |var: &str, key: &str, default: u16| {
            get(var, key)
                .and_then(|p| p.parse().ok())
                .unwrap_or(default)
        };
        let imap_port = port("EMAIL_IMAP_PORT", "imap_port", 993);
        let smtp_port = port("EMAIL_SMTP_PORT", "smtp_port", 587);
        let require_authenticated =
            boolean(platform_key(tree, "email", "require_authenticated_sender").as_deref())
                .unwrap_or_else(|| {
                    boolean(env("EMAIL_TRUST_FROM_HEADER").as_deref()) != Some(true)
                });
        Some(Self {
            login: get("EMAIL_USERNAME", "username").unwrap_or_else(|| address.clone()),
            address,
            password,
            imap_tls: TlsMode::read(get("EMAIL_IMAP_TLS", "imap_tls"), imap_port, 993),
            smtp_tls: TlsMode::read(get("EMAIL_SMTP_TLS", "smtp_tls"), smtp_port, 465),
            imap_host,
            imap_port,
            smtp_host,
            smtp_port,
            idle: boolean(platform_key(tree, "email", "idle").as_deref()).unwrap_or(true),
            poll_interval: Duration::from_secs_f64(
                get("EMAIL_POLL_INTERVAL", "poll_interval")
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .unwrap_or(15.0),
            ),
            require_authenticated,
            authserv: get("EMAIL_AUTHSERV_ID", "authserv_id").map(|a| a.to_ascii_lowercase()),
        })
    }
}

/// The subjects and last messages of recent threads, kept in
/// `HERMES_HOME/gateway/email_threads.json` so answers after a restart
/// still go into their thread.
struct Threads {
    path: PathBuf,
    known: Mutex<BTreeMap<String, send::Thread>>,
}

/// Threads remembered at most.
const THREADS_KEPT: usize = 500;

impl Threads {
    fn open(home: &Path) -> Self {
        let path = home.join("gateway").join("email_threads.json");
        let known = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<BTreeMap<String, (String, String)>>(&t).ok())
            .unwrap_or_default()
            .into_iter()
            .map(|(root, (subject, last))| {
                let thread = send::Thread {
                    subject,
                    root: root.clone(),
                    last,
                };
                (root, thread)
            })
            .collect();
        Self {
            path,
            known: Mutex::new(known),
        }
    }

    fn get(&self, root: &str) -> Option<send::Thread> {
        self.known.lock().ok()?.get(root).cloned()
    }

    fn note(&self, thread: send::Thread) {
        let Ok(mut known) = self.known.lock() else {
            return;
        };
        known.insert(thread.root.clone(), thread);
        while known.len() > THREADS_KEPT {
            let Some(first) = known.keys().next().cloned() else {
                break;
            };
            known.remove(&first);
        }
        let saved: BTreeMap<&String, (&String, &String)> = known
            .iter()
            .map(|(root, t)| (root, (&t.subject, &t.last)))
            .collect();
        if let Ok(text) = serde_json::to_string(&saved) {
            let _ =
                hermes_fs::write_atomic(&self.path, text.as_bytes(), hermes_fs::Access::Private);
        }
    }
}

/// The email adapter.
pub struct Email {
    settings: Arc<EmailSettings>,
    inbox: imap::Inbox,
    caps: Capabilities,
    cache: PathBuf,
    threads: Threads,
    wait: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Email {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Email")
            .field("address", &self.settings.address)
            .finish_non_exhaustive()
    }
}

/// Seconds one wait for mail lasts at most.
const WAIT_SECS: u64 = 25;

impl Email {
    /// An adapter for `settings`; files go under `hermes_home/cache`.
    pub fn new(settings: EmailSettings, hermes_home: &Path) -> Self {
        let settings = Arc::new(settings);
        Self {
            inbox: imap::Inbox::new(settings.clone()),
            settings,
            caps: Capabilities {
                max_len: 50_000,
                edit_interval: Duration::from_secs(3600),
                buttons: false,
            },
            cache: hermes_home.join("cache"),
            threads: Threads::open(hermes_home),
            wait: std::sync::atomic::AtomicU64::new(WAIT_SECS),
        }
    }

    /// The email as a message for the agent, or `None` when it is not to be answered.
    fn incoming(&self, raw: &[u8]) -> Option<Incoming> {
        let mail = parse::read(
            raw,
            &self.settings.address,
            self.settings.authserv.as_deref(),
        )?;
        if mail.skip.is_some() || (self.settings.require_authenticated && !mail.authenticated) {
            return None;
        }
        let mut attachments = Vec::new();
        for (name, mime, bytes) in &mail.files {
            let kind = if mime.starts_with("image/") {
                "image"
            } else {
                "document"
            };
            let ext = Path::new(name)
                .extension()
                .map(|e| format!(".{}", e.to_string_lossy()))
                .unwrap_or_default();
            if let Ok(path) =
                super::media::save_incoming(&self.cache, kind, Some(name), &ext, bytes)
            {
                attachments.push(Attachment {
                    kind: kind.to_owned(),
                    path: path.display().to_string(),
                });
            }
        }
        let subject = self
            .threads
            .get(&mail.thread_root)
            .map_or_else(|| mail.subject.clone(), |t| t.subject);
        self.threads.note(send::Thread {
            subject,
            root: mail.thread_root.clone(),
            last: mail.message_id.clone(),
        });
        Some(Incoming {
            key: mail.message_id.clone(),
            chat: ChatRef {
                id: mail.from.clone(),
                kind: ChatKind::Dm,
                thread_id: Some(mail.thread_root.clone()),
                name: Some(mail.name.clone()),
            },
            sender: Sender {
                id: mail.from.clone(),
                name: mail.name.clone(),
            },
            text: parse::agent_text(&mail),
            addressed: true,
            button_press: None,
            attachments,
        })
    }

    fn thread_of(&self, chat: &ChatRef) -> Option<send::Thread> {
        let root = chat.thread_id.as_deref()?;
        Some(self.threads.get(root).unwrap_or_else(|| send::Thread {
            subject: String::new(),
            root: root.to_owned(),
            last: root.to_owned(),
        }))
    }
}

impl Adapter for Email {
    fn name(&self) -> &'static str {
        "email"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn connect(&self) -> BoxFuture<'_, Result<BotIdentity, PlatformError>> {
        Box::pin(async move {
            self.inbox.check().await?;
            Ok(BotIdentity {
                id: self.settings.address.clone(),
                username: self.settings.address.clone(),
            })
        })
    }

    fn account(&self) -> String {
        super::platform::digest(&format!(
            "{}|{}",
            self.settings.address, self.settings.imap_host
        ))
    }

    fn limit_poll(&self, max: Duration) {
        let secs = max.as_secs().clamp(1, WAIT_SECS);
        self.wait.store(secs, std::sync::atomic::Ordering::Relaxed);
    }

    fn receive<'a>(
        &'a self,
        cursor: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Batch, PlatformError>> {
        Box::pin(async move {
            let wait = Duration::from_secs(self.wait.load(std::sync::atomic::Ordering::Relaxed));
            let (raws, next) = self.inbox.fetch_new(cursor, wait).await?;
            let messages = raws.iter().filter_map(|raw| self.incoming(raw)).collect();
            Ok(Batch {
                messages,
                cursor: Some(next),
            })
        })
    }

    fn send<'a>(
        &'a self,
        chat: &'a ChatRef,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<String, PlatformError>> {
        Box::pin(async move {
            let thread = self.thread_of(chat);
            let email = send::build(
                &self.settings,
                &chat.id,
                thread.as_ref(),
                &message.text,
                Vec::new(),
            )?;
            let id = email
                .headers()
                .get_raw("Message-ID")
                .unwrap_or_default()
                .trim_matches(['<', '>'])
                .to_owned();
            send::deliver(&self.settings, email).await?;
            Ok(id)
        })
    }

    fn send_file<'a>(
        &'a self,
        chat: &'a ChatRef,
        file: &'a OutgoingFile,
        caption: &'a str,
    ) -> BoxFuture<'a, Result<String, PlatformError>> {
        Box::pin(async move {
            let bytes = file.bytes().await?;
            let attachment = send::File {
                name: file.name(),
                mime: MediaKind::mime(&file.path).to_owned(),
                bytes,
            };
            let thread = self.thread_of(chat);
            let text = if caption.trim().is_empty() {
                file.name()
            } else {
                caption.to_owned()
            };
            let email = send::build(
                &self.settings,
                &chat.id,
                thread.as_ref(),
                &text,
                vec![attachment],
            )?;
            send::deliver(&self.settings, email).await?;
            Ok(String::new())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_need_the_account_and_pick_tls_by_port() {
        let env = |k: &str| match k {
            "EMAIL_ADDRESS" => Some("Bot@Example.com".to_owned()),
            "EMAIL_PASSWORD" => Some("pw".to_owned()),
            "EMAIL_IMAP_HOST" => Some("imap.example.com".to_owned()),
            "EMAIL_SMTP_HOST" => Some("smtp.example.com".to_owned()),
            "EMAIL_SMTP_PORT" => Some("465".to_owned()),
            _ => None,
        };
        let s = EmailSettings::read(&json!({}), &env).unwrap();
        assert_eq!(s.address, "bot@example.com");
        assert_eq!((s.imap_port, s.imap_tls), (993, TlsMode::Implicit));
        assert_eq!((s.smtp_port, s.smtp_tls), (465, TlsMode::Implicit));
        assert!(s.require_authenticated);
        assert_eq!(s.poll_interval, Duration::from_secs(15));
        let tree =
            json!({"platforms": {"email": {"extra": {"smtp_tls": "none", "smtp_port": 2525}}}});
        let env2 = |k: &str| if k == "EMAIL_SMTP_PORT" { None } else { env(k) };
        let s = EmailSettings::read(&tree, &env2).unwrap();
        assert_eq!((s.smtp_port, s.smtp_tls), (2525, TlsMode::None));
        let missing = |k: &str| if k == "EMAIL_PASSWORD" { None } else { env(k) };
        assert!(EmailSettings::read(&json!({}), &missing).is_none());
    }
}
