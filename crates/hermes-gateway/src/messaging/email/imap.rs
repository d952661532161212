//! The IMAP side: one session kept open, new mail found by UID after the
//! saved position (`<uidvalidity>:<last uid>`, so a restart neither loses
//! nor repeats mail), and IDLE to wait for more (polling where IDLE fails).

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use async_imap::Session;
use async_imap::extensions::idle::IdleResponse;
use futures_util::TryStreamExt;
use tokio::io::{AsyncRead, AsyncWrite};

use super::{EmailSettings, TlsMode};
use crate::messaging::platform::PlatformError;

/// A byte stream IMAP runs over (plain TCP or TLS).
pub(super) trait Io: AsyncRead + AsyncWrite + Unpin + Send + Debug {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + Debug> Io for T {}

type ImapSession = Session<Box<dyn Io>>;

fn transient(what: &str, e: impl std::fmt::Display) -> PlatformError {
    PlatformError::Transient(format!("IMAP {what}: {e}"))
}

/// The mailbox the bot reads.
pub(super) struct Inbox {
    settings: Arc<EmailSettings>,
    session: tokio::sync::Mutex<Option<ImapSession>>,
}

/// Where reading stopped: the mailbox's UIDVALIDITY and the last UID taken.
fn parse_cursor(cursor: Option<&str>) -> Option<(u32, u32)> {
    let (validity, uid) = cursor?.split_once(':')?;
    Some((validity.parse().ok()?, uid.parse().ok()?))
}

/// A TLS connector with the system's roots (as HTTPS clients use).
fn tls_connector() -> Result<tokio_rustls::TlsConnector, PlatformError> {
    let mut config = hermes_llm::SharedHttp::websocket_tls()
        .map_err(|e| PlatformError::Rejected(format!("IMAP TLS: {e}")))?;
    config.alpn_protocols.clear();
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

/// `stream` wrapped in TLS for the IMAP host.
async fn secure(
    settings: &EmailSettings,
    stream: Box<dyn Io>,
) -> Result<Box<dyn Io>, PlatformError> {
    let name = rustls::pki_types::ServerName::try_from(settings.imap_host.clone())
        .map_err(|e| PlatformError::Rejected(format!("IMAP host: {e}")))?;
    let tls = tls_connector()?
        .connect(name, stream)
        .await
        .map_err(|e| transient("TLS", e))?;
    Ok(Box::new(tls))
}

async fn connect(settings: &EmailSettings) -> Result<ImapSession, PlatformError> {
    let addr = (settings.imap_host.as_str(), settings.imap_port);
    let tcp = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::net::TcpStream::connect(addr),
    )
    .await
    .map_err(|_| transient("connect", "timed out"))?
    .map_err(|e| transient("connect", e))?;
    let plain: Box<dyn Io> = Box::new(tcp);
    let stream = match settings.imap_tls {
        TlsMode::Implicit => secure(settings, plain).await?,
        TlsMode::StartTls => {
            let mut client = async_imap::Client::new(plain);
            client
                .read_response()
                .await
                .map_err(|e| transient("greeting", e))?;
            client
                .run_command_and_check_ok("STARTTLS", None)
                .await
                .map_err(|e| transient("STARTTLS", e))?;
            secure(settings, client.into_inner()).await?
        }
        TlsMode::None => plain,
    };
    let mut client = async_imap::Client::new(stream);
    // After STARTTLS the server sends no second greeting.
    if settings.imap_tls != TlsMode::StartTls {
        client
            .read_response()
            .await
            .map_err(|e| transient("greeting", e))?;
    }
    client
        .login(&settings.login, &settings.password)
        .await
        .map_err(|(e, _)| PlatformError::Rejected(format!("IMAP login as {}: {e}", settings.login)))
}

impl Inbox {
    pub(super) fn new(settings: Arc<EmailSettings>) -> Self {
        Self {
            settings,
            session: tokio::sync::Mutex::new(None),
        }
    }

    /// Logs in (checks the credentials).
    pub(super) async fn check(&self) -> Result<(), PlatformError> {
        let mut slot = self.session.lock().await;
        *slot = Some(connect(&self.settings).await?);
        Ok(())
    }

    /// Mail after `cursor` (waiting up to `wait` for some), with the new
    /// position; the first call only finds where "now" is.
    pub(super) async fn fetch_new(
        &self,
        cursor: Option<&str>,
        wait: Duration,
    ) -> Result<(Vec<Vec<u8>>, String), PlatformError> {
        let mut slot = self.session.lock().await;
        let session = match slot.take() {
            Some(s) => s,
            None => connect(&self.settings).await?,
        };
        let (result, session) = self.fetch_in(session, cursor, wait).await;
        // A session that failed is dropped: the next call logs in again.
        if result.is_ok() {
            *slot = session;
        }
        result
    }

    async fn fetch_in(
        &self,
        mut session: ImapSession,
        cursor: Option<&str>,
        wait: Duration,
    ) -> (
        Result<(Vec<Vec<u8>>, String), PlatformError>,
        Option<ImapSession>,
    ) {
        let mailbox = match session.select("INBOX").await {
            Ok(m) => m,
            Err(e) => return (Err(transient("SELECT", e)), None),
        };
        let validity = mailbox.uid_validity.unwrap_or(0);
        let last = match parse_cursor(cursor) {
            Some((v, uid)) if v == validity => uid,
            // First run, or the mailbox was rebuilt: start from now.
            _ => {
                let now = mailbox.uid_next.unwrap_or(1).saturating_sub(1);
                return (Ok((Vec::new(), format!("{validity}:{now}"))), Some(session));
            }
        };
        let mut uids = match new_uids(&mut session, last).await {
            Ok(u) => u,
            Err(e) => return (Err(e), None),
        };
        if uids.is_empty() {
            session = match self.wait_for_mail(session, wait).await {
                Ok(s) => s,
                Err(e) => return (Err(e), None),
            };
            uids = match new_uids(&mut session, last).await {
                Ok(u) => u,
                Err(e) => return (Err(e), None),
            };
        }
        if uids.is_empty() {
            return (
                Ok((Vec::new(), format!("{validity}:{last}"))),
                Some(session),
            );
        }
        let set = uids
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let fetched: Vec<(u32, Vec<u8>)> = match session.uid_fetch(&set, "(UID BODY.PEEK[])").await
        {
            Ok(stream) => match stream.try_collect::<Vec<_>>().await {
                Ok(all) => all
                    .iter()
                    .filter_map(|f| Some((f.uid?, f.body()?.to_vec())))
                    .collect(),
                Err(e) => return (Err(transient("FETCH", e)), None),
            },
            Err(e) => return (Err(transient("FETCH", e)), None),
        };
        let mut fetched = fetched;
        fetched.sort_by_key(|(uid, _)| *uid);
        let top = fetched.last().map_or(last, |(uid, _)| *uid);
        // Seen in the user's mail client too (the position is what counts here).
        if let Ok(stream) = session.uid_store(&set, "+FLAGS (\\Seen)").await {
            let _ = stream.try_collect::<Vec<_>>().await;
        }
        let raws = fetched.into_iter().map(|(_, raw)| raw).collect();
        (Ok((raws, format!("{validity}:{top}"))), Some(session))
    }

    /// Waits for news with IDLE (or sleeps the poll interval where the
    /// server has no IDLE).
    async fn wait_for_mail(
        &self,
        session: ImapSession,
        wait: Duration,
    ) -> Result<ImapSession, PlatformError> {
        if !self.settings.idle {
            tokio::time::sleep(self.settings.poll_interval.min(wait)).await;
            return Ok(session);
        }
        let mut idle = session.idle();
        idle.init().await.map_err(|e| transient("IDLE", e))?;
        {
            let (news, _stop) = idle.wait_with_timeout(wait);
            match news.await {
                Ok(
                    IdleResponse::NewData(_)
                    | IdleResponse::Timeout
                    | IdleResponse::ManualInterrupt,
                ) => {}
                Err(e) => return Err(transient("IDLE", e)),
            }
        }
        idle.done().await.map_err(|e| transient("IDLE", e))
    }
}

/// UIDs above `last` in the selected mailbox, ascending.
async fn new_uids(session: &mut ImapSession, last: u32) -> Result<Vec<u32>, PlatformError> {
    let found = session
        .uid_search(format!("UID {}:*", last.saturating_add(1)))
        .await
        .map_err(|e| transient("SEARCH", e))?;
    // `n:*` always matches the newest message, even one at or below `last`.
    let mut uids: Vec<u32> = found.into_iter().filter(|u| *u > last).collect();
    uids.sort_unstable();
    Ok(uids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors() {
        assert_eq!(parse_cursor(Some("17:42")), Some((17, 42)));
        assert_eq!(parse_cursor(Some("x")), None);
        assert_eq!(parse_cursor(None), None);
    }
}
