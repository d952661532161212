//! Files in answers and in messages. The agent names a file to deliver with
//! a `MEDIA:<path>` tag (the reference's convention); the tag leaves the
//! text and the file goes out as an attachment. Files people send are saved
//! under `HERMES_HOME/cache` for the agent to read.

use std::path::{Path, PathBuf};

/// What kind of file an attachment is; platforms send each kind their own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    /// Shown inline.
    Image,
    /// Played inline where the platform can.
    Video,
    /// Music or a recording.
    Audio,
    /// A voice note (`[[audio_as_voice]]`, or an .ogg/.opus recording).
    Voice,
    /// Anything else, as a file.
    Document,
}

impl MediaKind {
    /// The kind a file's extension suggests.
    pub fn of(path: &Path) -> Self {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "png" | "jpg" | "jpeg" | "gif" | "webp" => Self::Image,
            "mp4" | "mov" | "webm" | "mkv" | "avi" => Self::Video,
            "ogg" | "opus" => Self::Voice,
            "mp3" | "wav" | "m4a" | "flac" | "aac" => Self::Audio,
            _ => Self::Document,
        }
    }

    /// The MIME type to declare for `path`.
    pub fn mime(path: &Path) -> &'static str {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "png" => "image/png",
            "jpg" | "jpeg" => "image/jpeg",
            "gif" => "image/gif",
            "webp" => "image/webp",
            "mp4" => "video/mp4",
            "mov" => "video/quicktime",
            "webm" => "video/webm",
            "ogg" | "opus" => "audio/ogg",
            "mp3" => "audio/mpeg",
            "wav" => "audio/wav",
            "m4a" => "audio/mp4",
            "pdf" => "application/pdf",
            "json" => "application/json",
            "txt" | "md" | "csv" | "log" => "text/plain",
            "html" | "htm" => "text/html",
            "zip" => "application/zip",
            _ => "application/octet-stream",
        }
    }
}

/// A file to send into a chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingFile {
    /// Where it is on disk (checked, canonical).
    pub path: PathBuf,
    /// How to send it.
    pub kind: MediaKind,
}

impl OutgoingFile {
    /// The file's bytes (a file gone since the answer named it is refused).
    pub async fn bytes(&self) -> Result<Vec<u8>, super::platform::PlatformError> {
        tokio::fs::read(&self.path).await.map_err(|e| {
            super::platform::PlatformError::Rejected(format!("cannot read {}: {e}", self.name()))
        })
    }

    /// The file's name as the chat shows it.
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".to_owned())
    }
}

/// The file a tag names, when it may be sent.
fn checked(raw: &str, user_home: Option<&Path>, hermes_home: &Path) -> Option<PathBuf> {
    let expanded = match raw.strip_prefix("~/") {
        Some(rest) => user_home?.join(rest),
        None => PathBuf::from(raw),
    };
    if !expanded.is_absolute() {
        return None;
    }
    let real = expanded.canonicalize().ok()?;
    if !real.is_file() || hermes_tools::paths::is_secret(&real, user_home, hermes_home) {
        return None;
    }
    Some(real)
}

/// Where a tag's path ends: a closing quote, or the first blank.
fn tag_path(after: &str) -> Option<(String, usize)> {
    let quote = after.chars().next()?;
    if matches!(quote, '`' | '"' | '\'') {
        let close = after[1..].find(quote)?;
        let path = &after[1..1 + close];
        return (!path.contains('\n')).then(|| (path.trim().to_owned(), close + 2));
    }
    let end = after.find(char::is_whitespace).unwrap_or(after.len());
    let token = after[..end].trim_end_matches(['.', ',', ';', ':', ')', ']', '}', '`', '"', '\'']);
    (!token.is_empty()).then(|| (token.to_owned(), end))
}

/// Takes the `MEDIA:<path>` tags out of an answer: the text without them,
/// and the files they name. A tag whose file is missing or not allowed stays
/// in the text, so nothing disappears silently.
pub fn extract(
    text: &str,
    user_home: Option<&Path>,
    hermes_home: &Path,
) -> (String, Vec<OutgoingFile>) {
    if !text.contains("MEDIA:") && !text.contains("[[audio_as_voice]]") {
        return (text.to_owned(), Vec::new());
    }
    let as_voice = text.contains("[[audio_as_voice]]");
    let as_document = text.contains("[[as_document]]");
    let source = text
        .replace("[[audio_as_voice]]", "")
        .replace("[[as_document]]", "");
    let mut out = String::with_capacity(source.len());
    let mut files: Vec<OutgoingFile> = Vec::new();
    let mut rest = source.as_str();
    while let Some(at) = rest.find("MEDIA:") {
        let (before, tail) = rest.split_at(at);
        let after = tail["MEDIA:".len()..].trim_start_matches([' ', '\t']);
        let skipped = tail.len() - "MEDIA:".len() - after.len();
        match tag_path(after)
            .and_then(|(raw, used)| checked(&raw, user_home, hermes_home).map(|path| (path, used)))
        {
            Some((path, used)) => {
                // A quote or backtick opening the tag goes with it.
                let before = before.strip_suffix(['`', '"', '\'']).unwrap_or(before);
                out.push_str(before);
                let mut kind = MediaKind::of(&path);
                if as_document {
                    kind = MediaKind::Document;
                } else if as_voice && matches!(kind, MediaKind::Audio | MediaKind::Voice) {
                    kind = MediaKind::Voice;
                }
                if !files.iter().any(|f| f.path == path) {
                    files.push(OutgoingFile { path, kind });
                }
                let consumed = "MEDIA:".len() + skipped + used;
                rest = tail[consumed..].trim_start_matches(['`', '"', '\'']);
            }
            None => {
                out.push_str(before);
                out.push_str("MEDIA:");
                rest = &tail["MEDIA:".len()..];
            }
        }
    }
    out.push_str(rest);
    (tidy(&out), files)
}

/// Removes the blank lines and trailing spaces tags leave behind.
fn tidy(text: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() && lines.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        lines.push(line);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

/// A `multipart/form-data` body: text fields, then one file; returns the
/// content type (with its boundary) and the bytes.
pub fn multipart(
    fields: &[(&str, String)],
    file_field: &str,
    file_name: &str,
    mime: &str,
    bytes: &[u8],
) -> (String, Vec<u8>) {
    let boundary = format!("hermes-{}", uuid::Uuid::new_v4().simple());
    let mut body = Vec::with_capacity(bytes.len() + 512);
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    let safe_name: String = file_name
        .chars()
        .map(|c| if c == '"' || c.is_control() { '_' } else { c })
        .collect();
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{file_field}\"; filename=\"{safe_name}\"\r\nContent-Type: {mime}\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// Saves a file someone sent under `cache/<images|audio|documents>` and
/// returns where; `name` is the sender's file name, when there is one.
pub fn save_incoming(
    cache: &Path,
    kind: &str,
    name: Option<&str>,
    ext: &str,
    bytes: &[u8],
) -> std::io::Result<PathBuf> {
    let unique = uuid::Uuid::new_v4().simple().to_string();
    let unique = &unique[..12];
    let (dir, file_name) = match (kind, name) {
        ("image", _) => ("images", format!("img_{unique}{ext}")),
        ("voice" | "audio", _) => ("audio", format!("audio_{unique}{ext}")),
        (_, Some(name)) => {
            let safe: String = name
                .chars()
                .map(|c| {
                    if c.is_alphanumeric() || ".-_".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            ("documents", format!("doc_{unique}_{safe}"))
        }
        _ => ("documents", format!("doc_{unique}{ext}")),
    };
    let dir = cache.join(dir);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(file_name);
    std::fs::write(&path, bytes)?;
    Ok(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn tags_become_files_and_leave_the_text() {
        let dir = tempfile::tempdir().unwrap();
        let hermes = dir.path().join("hermes");
        std::fs::create_dir_all(&hermes).unwrap();
        let chart = dir.path().join("chart.png");
        std::fs::write(&chart, b"png").unwrap();
        let report = dir.path().join("my report.pdf");
        std::fs::write(&report, b"pdf").unwrap();
        let text = format!(
            "Here is the chart:\nMEDIA:{}\n\nAnd the report: MEDIA:\"{}\".\nMEDIA:/no/such/file.png",
            chart.display(),
            report.display()
        );
        let (clean, files) = extract(&text, None, &hermes);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].kind, MediaKind::Image);
        assert_eq!(files[1].kind, MediaKind::Document);
        assert_eq!(files[1].name(), "my report.pdf");
        assert!(!clean.contains(&chart.display().to_string()), "{clean}");
        assert!(
            clean.contains("MEDIA:/no/such/file.png"),
            "a missing file stays visible"
        );
        assert!(
            clean.starts_with("Here is the chart:\n\nAnd the report:"),
            "{clean}"
        );
    }

    #[test]
    fn secrets_are_never_sent() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let hermes = home.join(".hermes");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(&hermes).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), b"key").unwrap();
        std::fs::write(hermes.join(".env"), b"KEY=1").unwrap();
        std::fs::write(home.join("notes.txt"), b"ok").unwrap();
        let text = "MEDIA:~/.ssh/id_rsa MEDIA:~/.hermes/.env MEDIA:/etc/hostname MEDIA:~/notes.txt";
        let (clean, files) = extract(text, Some(&home), &hermes);
        assert_eq!(files.len(), 1, "{files:?}");
        assert_eq!(files[0].name(), "notes.txt");
        assert!(clean.contains("MEDIA:~/.ssh/id_rsa") && clean.contains("MEDIA:/etc/hostname"));
    }

    #[test]
    fn voice_marker_and_multipart() {
        let dir = tempfile::tempdir().unwrap();
        let clip = dir.path().join("say.mp3");
        std::fs::write(&clip, b"mp3").unwrap();
        let (clean, files) = extract(
            &format!("[[audio_as_voice]]\nMEDIA:{}", clip.display()),
            None,
            dir.path(),
        );
        assert_eq!(clean, "");
        assert_eq!(files[0].kind, MediaKind::Voice);
        let (ct, body) = multipart(
            &[("chat_id", "42".into())],
            "document",
            "a\"b.txt",
            "text/plain",
            b"hi",
        );
        let boundary = ct.split("boundary=").nth(1).unwrap();
        let body = String::from_utf8(body).unwrap();
        assert!(body.contains("name=\"chat_id\"\r\n\r\n42\r\n"));
        assert!(body.contains("filename=\"a_b.txt\""));
        assert!(body.ends_with(&format!("hi\r\n--{boundary}--\r\n")));
    }
}
