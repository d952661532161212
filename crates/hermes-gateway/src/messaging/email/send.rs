//! The SMTP side: answers as a reply in the sender's thread (`Re:` subject,
//! `In-Reply-To`, `References`), plain text with an HTML alternative, files
//! as attachments.

use std::time::Duration;

use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::{EmailSettings, TlsMode};
use crate::messaging::platform::PlatformError;

/// Where an answer goes in a thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Thread {
    /// The thread's subject.
    pub subject: String,
    /// Its first message (`References` starts with it).
    pub root: String,
    /// The last message received in it (`In-Reply-To`).
    pub last: String,
}

/// A file to attach.
pub(super) struct File {
    pub name: String,
    pub mime: String,
    pub bytes: Vec<u8>,
}

fn rejected(e: impl std::fmt::Display) -> PlatformError {
    PlatformError::Rejected(format!("SMTP: {e}"))
}

fn transport(
    settings: &EmailSettings,
) -> Result<AsyncSmtpTransport<Tokio1Executor>, PlatformError> {
    let host = settings.smtp_host.as_str();
    let builder = match settings.smtp_tls {
        TlsMode::Implicit => AsyncSmtpTransport::<Tokio1Executor>::relay(host).map_err(rejected)?,
        TlsMode::StartTls => {
            AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(host).map_err(rejected)?
        }
        TlsMode::None => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host),
    };
    Ok(builder
        .port(settings.smtp_port)
        .credentials(Credentials::new(
            settings.login.clone(),
            settings.password.clone(),
        ))
        .timeout(Some(Duration::from_secs(30)))
        .build())
}

/// `Re: subject` (once).
fn reply_subject(subject: &str) -> String {
    if subject.is_empty() {
        "Hermes Agent".to_owned()
    } else if subject.to_ascii_lowercase().starts_with("re:") {
        subject.to_owned()
    } else {
        format!("Re: {subject}")
    }
}

/// Builds the email: `text` (markdown) to `to`, in `thread` when known.
pub(super) fn build(
    settings: &EmailSettings,
    to: &str,
    thread: Option<&Thread>,
    text: &str,
    files: Vec<File>,
) -> Result<Message, PlatformError> {
    let from: Mailbox = settings.address.parse().map_err(rejected)?;
    let to: Mailbox = to.parse().map_err(rejected)?;
    let domain = settings.address.rsplit('@').next().unwrap_or("localhost");
    let mut builder = Message::builder()
        .from(from)
        .to(to)
        .subject(reply_subject(thread.map_or("", |t| t.subject.as_str())))
        .message_id(Some(format!(
            "<hermes-{}@{domain}>",
            uuid::Uuid::new_v4().simple()
        )));
    if let Some(t) = thread.filter(|t| !t.root.is_empty()) {
        let last = if t.last.is_empty() { &t.root } else { &t.last };
        builder = builder.in_reply_to(format!("<{last}>"));
        let references = if last == &t.root {
            format!("<{}>", t.root)
        } else {
            format!("<{}> <{last}>", t.root)
        };
        builder = builder.references(references);
    }
    let plain = crate::messaging::format::plain(text);
    let html = crate::messaging::format::matrix_html(text);
    let body = MultiPart::alternative()
        .singlepart(SinglePart::plain(plain))
        .singlepart(SinglePart::html(html));
    let message = if files.is_empty() {
        builder.multipart(body)
    } else {
        let mut mixed = MultiPart::mixed().multipart(body);
        for file in files {
            let kind = ContentType::parse(&file.mime)
                .unwrap_or(ContentType::parse("application/octet-stream").map_err(rejected)?);
            mixed = mixed.singlepart(Attachment::new(file.name).body(file.bytes, kind));
        }
        builder.multipart(mixed)
    };
    message.map_err(rejected)
}

/// Sends `message`.
pub(super) async fn deliver(
    settings: &EmailSettings,
    message: Message,
) -> Result<(), PlatformError> {
    transport(settings)?
        .send(message)
        .await
        .map(|_| ())
        .map_err(|e| {
            if e.is_permanent() {
                PlatformError::Rejected(format!("SMTP: {e}"))
            } else {
                PlatformError::Transient(format!("SMTP: {e}"))
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_get_one_re() {
        assert_eq!(reply_subject("Plans"), "Re: Plans");
        assert_eq!(reply_subject("RE: Plans"), "RE: Plans");
        assert_eq!(reply_subject(""), "Hermes Agent");
    }
}
