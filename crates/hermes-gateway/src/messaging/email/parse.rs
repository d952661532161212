//! One fetched email read as a message for the agent: who sent it, the
//! thread it belongs to, its text without the quoted reply, its files; and
//! the mail that is never answered (auto-replies, bounces, lists, our own).

use mail_parser::{HeaderValue, Message, MessageParser, MimeHeaders};

/// What the adapter needs of an email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    /// The sender's address, lower case.
    pub from: String,
    /// The sender's display name (or the address).
    pub name: String,
    /// `Message-ID` (angle brackets off); a made-up one when missing.
    pub message_id: String,
    /// The first message of the thread (`References`' first id, else
    /// `In-Reply-To`, else this message).
    pub thread_root: String,
    /// The subject.
    pub subject: String,
    /// The new text: the plain part (the HTML part's text when there is
    /// none), quoted reply and signature cut off.
    pub text: String,
    /// Files: name and bytes.
    pub files: Vec<(String, String, Vec<u8>)>,
    /// Why it is not answered, when it is not.
    pub skip: Option<&'static str>,
    /// The sender passed the receiving server's checks (`Authentication-Results`).
    pub authenticated: bool,
}

fn ids(value: &HeaderValue<'_>) -> Vec<String> {
    value
        .as_text_list()
        .map(|l| {
            l.iter()
                .map(|s| s.trim_matches(['<', '>']).to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Address fragments of senders that are machines.
const MACHINE_SENDERS: &[&str] = &[
    "noreply",
    "no-reply",
    "no_reply",
    "donotreply",
    "do-not-reply",
    "mailer-daemon",
    "postmaster",
    "bounce",
    "notifications@",
    "auto-reply",
    "automailer",
];

/// Why `message` from `from` must never be answered (RFC 3834 and common
/// practice), if it must not.
fn automated(message: &Message<'_>, from: &str) -> Option<&'static str> {
    let header = |name: &str| {
        message
            .header_raw(name)
            .map(|v| v.trim().to_ascii_lowercase())
    };
    if header("Auto-Submitted").is_some_and(|v| !v.starts_with("no")) {
        return Some("auto-submitted");
    }
    if header("Precedence").is_some_and(|v| matches!(v.as_str(), "bulk" | "list" | "junk")) {
        return Some("bulk or list mail");
    }
    if header("List-Id").is_some() || header("List-Unsubscribe").is_some() {
        return Some("mailing list");
    }
    if header("X-Auto-Response-Suppress").is_some() || header("X-Autoreply").is_some() {
        return Some("auto-reply");
    }
    if header("Content-Type").is_some_and(|v| v.contains("multipart/report")) {
        return Some("delivery report");
    }
    if message.return_address() == Some("") || header("Return-Path").as_deref() == Some("<>") {
        return Some("bounce");
    }
    if MACHINE_SENDERS.iter().any(|m| from.contains(m)) {
        return Some("machine sender");
    }
    None
}

/// Whether the receiving server vouched for the From domain: DMARC passed,
/// or SPF/DKIM passed for the same domain. `authserv` pins whose header counts.
fn sender_verified(message: &Message<'_>, from: &str, authserv: Option<&str>) -> bool {
    let domain = from.rsplit('@').next().unwrap_or_default();
    let aligned = |d: &str| {
        let d = d
            .trim()
            .trim_matches(['<', '>', ';'])
            .rsplit('@')
            .next()
            .unwrap_or(d);
        d.eq_ignore_ascii_case(domain)
            || domain.ends_with(&format!(".{d}"))
            || d.ends_with(&format!(".{domain}"))
    };
    message
        .headers_raw()
        .filter(|(name, _)| name.eq_ignore_ascii_case("Authentication-Results"))
        .map(|(_, value)| value.to_ascii_lowercase())
        .find(|v| {
            let id = v.split(';').next().unwrap_or_default().trim();
            authserv.is_none_or(|a| id == a || id.ends_with(&format!(".{a}")))
        })
        .is_some_and(|results| {
            results.split(';').any(|clause| {
                let words: Vec<&str> = clause.split_whitespace().collect();
                let verdict = |method: &str| words.iter().any(|w| *w == format!("{method}=pass"));
                let prop = |key: &str| {
                    words
                        .iter()
                        .find_map(|w| w.strip_prefix(&format!("{key}=")))
                        .is_some_and(aligned)
                };
                verdict("dmarc")
                    || (verdict("spf") && (prop("smtp.mailfrom") || prop("smtp.from")))
                    || (verdict("dkim") && (prop("header.d") || prop("header.from")))
            })
        })
}

/// `text` without what a mail client quotes under a reply (`> …` lines and
/// the "On … wrote:" line before them) or a `-- ` signature.
pub fn new_text(text: &str) -> String {
    let mut kept = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with('>') || *line == "-- " || trimmed == "-----Original Message-----" {
            break;
        }
        let next_quoted = lines
            .get(i + 1)
            .is_some_and(|n| n.trim_start().starts_with('>'));
        if trimmed.ends_with("wrote:") && (next_quoted || trimmed.starts_with("On ")) {
            break;
        }
        kept.push(*line);
    }
    kept.join("\n").trim().to_owned()
}

/// Reads `raw` sent to `own` (our address); `None` when it cannot be parsed.
pub fn read(raw: &[u8], own: &str, authserv: Option<&str>) -> Option<Mail> {
    let message = MessageParser::default().parse(raw)?;
    let sender = message.from().and_then(|a| a.first())?;
    let from = sender.address()?.trim().to_ascii_lowercase();
    let name = sender
        .name()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or(&from)
        .to_owned();
    let message_id = message
        .message_id()
        .map(|m| m.trim_matches(['<', '>']).to_owned())
        .unwrap_or_else(|| format!("hermes-missing-{}", uuid::Uuid::new_v4().simple()));
    let thread_root = ids(message.references())
        .into_iter()
        .next()
        .or_else(|| ids(message.in_reply_to()).into_iter().next())
        .unwrap_or_else(|| message_id.clone());
    let body = message
        .body_text(0)
        .map(|t| t.into_owned())
        .unwrap_or_default();
    let mut files = Vec::new();
    for part in message.attachments() {
        let mime = part
            .content_type()
            .map(|c| format!("{}/{}", c.ctype(), c.subtype().unwrap_or("octet-stream")))
            .unwrap_or_else(|| "application/octet-stream".to_owned());
        let file_name = part
            .attachment_name()
            .map(str::to_owned)
            .unwrap_or_else(|| format!("attachment.{}", mime.rsplit('/').next().unwrap_or("bin")));
        files.push((file_name, mime, part.contents().to_vec()));
    }
    let skip = if from.eq_ignore_ascii_case(own) {
        Some("our own mail")
    } else {
        automated(&message, &from)
    };
    Some(Mail {
        authenticated: sender_verified(&message, &from, authserv),
        from,
        name,
        message_id,
        thread_root,
        subject: message
            .subject()
            .unwrap_or("(no subject)")
            .trim()
            .to_owned(),
        text: new_text(&body),
        files,
        skip,
    })
}

/// The text the agent gets: the subject first for a new thread (as the
/// reference does), the body alone for a reply.
pub fn agent_text(mail: &Mail) -> String {
    let is_reply = mail.subject.to_ascii_lowercase().starts_with("re:");
    let body = if mail.text.is_empty() && mail.files.is_empty() {
        "(empty email)"
    } else {
        &mail.text
    };
    if is_reply {
        body.to_owned()
    } else {
        format!("[Subject: {}]\n\n{body}", mail.subject)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn mail(headers: &str, body: &str) -> Mail {
        let raw = format!(
            "From: Ann <Ann@Hermes.Test>\r\nTo: bot@hermes.test\r\nSubject: Plans\r\nMessage-ID: <m1@x>\r\n{headers}\r\n{body}"
        );
        read(raw.as_bytes(), "bot@hermes.test", None).unwrap()
    }

    #[test]
    fn a_reply_keeps_its_thread_and_loses_its_quote() {
        let m = mail(
            "In-Reply-To: <m0@x>\r\nReferences: <root@x> <m0@x>\r\n",
            "approve\r\n\r\nOn Sat, 28 Nov 2026, Bot wrote:\r\n> Reply /approve or /deny\r\n",
        );
        assert_eq!(m.from, "ann@hermes.test");
        assert_eq!(m.name, "Ann");
        assert_eq!(m.thread_root, "root@x");
        assert_eq!(m.text, "approve");
        assert_eq!(m.skip, None);
        assert!(!m.authenticated);
    }

    #[test]
    fn machines_and_lists_are_not_answered() {
        assert_eq!(
            mail("Auto-Submitted: auto-replied\r\n", "away").skip,
            Some("auto-submitted")
        );
        assert_eq!(mail("Auto-Submitted: no\r\n", "hi").skip, None);
        assert_eq!(
            mail("Precedence: bulk\r\n", "x").skip,
            Some("bulk or list mail")
        );
        assert_eq!(
            mail("List-Id: <dev.lists.x>\r\n", "x").skip,
            Some("mailing list")
        );
        let own = read(
            b"From: bot@hermes.test\r\nSubject: x\r\n\r\nloop",
            "bot@hermes.test",
            None,
        )
        .unwrap();
        assert_eq!(own.skip, Some("our own mail"));
    }

    #[test]
    fn authentication_results_vouch_for_the_domain() {
        let pass = mail(
            "Authentication-Results: hermes.test; spf=none; dmarc=pass header.from=hermes.test\r\n",
            "hi",
        );
        assert!(pass.authenticated);
        let other = mail(
            "Authentication-Results: hermes.test; spf=pass smtp.mailfrom=evil.example\r\n",
            "hi",
        );
        assert!(!other.authenticated);
        let raw = "From: ann@hermes.test\r\nSubject: x\r\nAuthentication-Results: relay.example; dmarc=pass\r\n\r\nhi";
        assert!(
            !read(raw.as_bytes(), "bot@hermes.test", Some("hermes.test"))
                .unwrap()
                .authenticated
        );
    }

    #[test]
    fn new_threads_carry_their_subject() {
        let m = mail("", "What is the plan?");
        assert_eq!(agent_text(&m), "[Subject: Plans]\n\nWhat is the plan?");
        assert_eq!(m.thread_root, "m1@x");
    }
}
