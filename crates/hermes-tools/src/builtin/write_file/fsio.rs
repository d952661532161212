//! File I/O shared by the file tools: text decoding with BOM and line-ending
//! bookkeeping, and atomic replacement of a file's contents.

use std::fs::{self};
use std::io::{self};
use std::path::{Path, PathBuf};

/// The UTF-8 byte order mark as a character.
pub(crate) const BOM: char = '\u{feff}';

/// A text file decoded for editing: BOM removed, line endings folded to `\n`.
#[derive(Debug, Clone)]
pub(crate) struct TextFile {
    /// Content with any leading BOM stripped and `\r\n` folded to `\n`.
    pub text: String,
    /// Whether the file started with a UTF-8 BOM.
    pub bom: bool,
    /// Whether the file's dominant line ending is `\r\n`.
    pub crlf: bool,
}

impl TextFile {
    /// Splits raw file text into its editable form and its on-disk conventions.
    pub(crate) fn from_raw(raw: &str) -> Self {
        let (body, bom) = match raw.strip_prefix(BOM) {
            Some(rest) => (rest, true),
            None => (raw, false),
        };
        let crlf = detect_crlf(body);
        let text = if crlf {
            body.replace("\r\n", "\n")
        } else {
            body.to_owned()
        };
        Self { text, bom, crlf }
    }

    /// Renders `text` back with this file's BOM and line-ending conventions.
    pub(crate) fn render(&self, text: &str) -> String {
        render_with(text, self.bom, self.crlf)
    }
}

/// Applies BOM / CRLF conventions to LF text (text that already carries a BOM keeps one).
pub(crate) fn render_with(text: &str, bom: bool, crlf: bool) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    if bom && !text.starts_with(BOM) {
        out.push(BOM);
    }
    if crlf {
        let lf = text.replace("\r\n", "\n");
        out.push_str(&lf.replace('\n', "\r\n"));
    } else {
        out.push_str(text);
    }
    out
}

/// True when the first 4 KiB of `sample` contain a `\r\n` line break.
pub(crate) fn detect_crlf(sample: &str) -> bool {
    let mut end = sample.len().min(4096);
    while !sample.is_char_boundary(end) {
        end -= 1;
    }
    sample[..end].contains("\r\n")
}

/// `bytes` of `path` as text for editing; binary or non-UTF-8 content is refused.
pub(crate) fn text_from_bytes(path: &Path, bytes: Vec<u8>) -> Result<TextFile, String> {
    if bytes.contains(&0) {
        return Err(format!(
            "{} looks like a binary file (it contains NUL bytes); it cannot be edited as text.",
            path.display()
        ));
    }
    let raw = String::from_utf8(bytes).map_err(|_| {
        format!(
            "{} is not valid UTF-8 text; it cannot be edited as text.",
            path.display()
        )
    })?;
    Ok(TextFile::from_raw(&raw))
}

/// A model-readable description of an I/O failure on `path`.
pub(crate) fn describe_io(path: &Path, err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::NotFound => format!("File not found: {}", path.display()),
        io::ErrorKind::PermissionDenied => format!("Permission denied: {}", path.display()),
        io::ErrorKind::IsADirectory => {
            format!("{} is a directory, not a file.", path.display())
        }
        _ => format!("Could not access {}: {err}", path.display()),
    }
}

/// The file a write to `path` should land in: a symlink's target, else `path`.
fn write_target(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Creates `path`'s missing parent directories; returns whether any were created.
pub(crate) fn ensure_parent(path: &Path) -> io::Result<bool> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() && !parent.exists() => {
            fs::create_dir_all(parent)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Replaces `path`'s contents atomically: writes a temp file beside it, copies
/// the existing file's permissions onto it, then renames it into place. On any
/// failure the temp file is removed and the original is left untouched.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = write_target(path);
    if target.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is a directory", target.display()),
        ));
    }
    hermes_fs::write_atomic(&target, bytes, hermes_fs::Access::Keep)
}
