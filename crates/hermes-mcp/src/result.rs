//! Turns an MCP `tools/call` result into the JSON text the model reads, as
//! the reference does: `{"result": …}` (plus `structuredContent`), or
//! `{"error": …}` for `isError` results. Images, audio and binary resources
//! are saved under `HERMES_HOME/cache/` and referenced by path.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Value, json};

/// Binary payloads larger than this are not saved.
const MAX_MEDIA_BYTES: usize = 50 * 1024 * 1024;

/// Where decoded media goes (`HERMES_HOME/cache`).
#[derive(Debug, Clone)]
pub struct MediaCache {
    root: PathBuf,
}

impl MediaCache {
    /// A cache under `root` (normally `HERMES_HOME/cache`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    fn save(&self, kind: &str, file_name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
        let dir = self.root.join(kind);
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(file_name);
        std::fs::write(&path, bytes)?;
        Ok(path)
    }
}

/// The model-facing text for a `tools/call` result (the result as JSON).
pub fn render_call(result: &Value, server: &str, cache: &MediaCache) -> String {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let text: String = blocks
            .iter()
            .filter_map(|b| {
                b.get("text")
                    .or_else(|| b.get("resource").and_then(|r| r.get("text")))
                    .and_then(Value::as_str)
            })
            .collect();
        let message = if text.is_empty() {
            "MCP tool returned an error".to_owned()
        } else {
            text
        };
        return json!({ "error": message }).to_string();
    }
    let parts: Vec<String> = blocks
        .iter()
        .filter_map(|b| render_block(b, server, cache))
        .filter(|p| !p.is_empty())
        .collect();
    let text = parts.join("\n");
    match result.get("structuredContent").filter(|v| !v.is_null()) {
        Some(structured) if !text.is_empty() => {
            json!({ "result": text, "structuredContent": structured }).to_string()
        }
        Some(structured) => json!({ "result": structured }).to_string(),
        None => json!({ "result": text }).to_string(),
    }
}

/// One content block as text; `None` for blocks nothing can be made of.
pub fn render_block(block: &Value, server: &str, cache: &MediaCache) -> Option<String> {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let str_of = |key: &str| block.get(key).and_then(Value::as_str);
    match kind {
        "text" => str_of("text").map(str::to_owned),
        "image" => media(block, "image", cache),
        "audio" => media(block, "audio", cache),
        "resource_link" => {
            let uri = str_of("uri")?;
            let mut details = format!("uri={uri}");
            if let Some(name) = str_of("name").filter(|n| !n.is_empty()) {
                details.push_str(&format!(", name={name}"));
            }
            if let Some(mime) = str_of("mimeType").filter(|m| !m.is_empty()) {
                details.push_str(&format!(", mimeType={mime}"));
            }
            let reader = crate::naming::prefixed(server, "read_resource");
            Some(format!(
                "[MCP resource link: {details} — fetch it with {reader}]"
            ))
        }
        "resource" => block.get("resource").map(|r| resource_contents(r, cache)),
        _ => None,
    }
}

/// An embedded resource (or one `resources/read` item): its text, or its
/// blob saved to the document cache.
pub fn resource_contents(resource: &Value, cache: &MediaCache) -> String {
    if let Some(text) = resource.get("text").and_then(Value::as_str) {
        return text.to_owned();
    }
    let Some(blob) = resource.get("blob").and_then(Value::as_str) else {
        return String::new();
    };
    let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
    let mime = resource
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("");
    if blob.len() > MAX_MEDIA_BYTES * 4 / 3 + 4 {
        return format!(
            "[MCP embedded resource too large to cache: ~{} bytes, uri={uri}]",
            blob.len() * 3 / 4
        );
    }
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(blob.trim()) else {
        let what = if mime.is_empty() { uri } else { mime };
        return format!("[MCP embedded resource could not be decoded: {what}]");
    };
    let name = format!("doc_{}_{}", short_id(), resource_file_name(uri, mime));
    let detail = if mime.is_empty() {
        "unknown type"
    } else {
        mime
    };
    match cache.save("documents", &name, &bytes) {
        Ok(path) => format!(
            "[MCP resource saved to {} ({detail}, {} bytes) — read it with read_file or terminal tools]",
            path.display(),
            bytes.len()
        ),
        Err(_) => format!(
            "[MCP embedded resource could not be cached: {}]",
            if mime.is_empty() { uri } else { mime }
        ),
    }
}

fn media(block: &Value, kind: &str, cache: &MediaCache) -> Option<String> {
    let data = block.get("data").and_then(Value::as_str)?;
    let mime = block
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if !mime.starts_with(&format!("{kind}/")) {
        return None;
    }
    if data.len() > MAX_MEDIA_BYTES * 4 / 3 + 4 {
        return Some(format!(
            "[MCP {kind} resource too large to cache: ~{} bytes]",
            data.len() * 3 / 4
        ));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .ok()?;
    let (dir, prefix) = if kind == "image" {
        if !looks_like_image(&bytes) {
            return None;
        }
        ("images", "img")
    } else {
        ("audio", "audio")
    };
    let name = format!("{prefix}_{}{}", short_id(), extension(&mime));
    let path = cache.save(dir, &name, &bytes).ok()?;
    Some(format!("MEDIA:{}", path.display()))
}

/// Refuses HTML error pages and other non-images dressed up as images.
fn looks_like_image(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x89PNG\r\n\x1a\n")
        || bytes.starts_with(b"\xff\xd8\xff")
        || bytes.starts_with(b"GIF87a")
        || bytes.starts_with(b"GIF89a")
        || bytes.starts_with(b"BM")
        || (bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP")
}

fn extension(mime: &str) -> &'static str {
    match mime {
        "image/jpeg" | "image/jpg" => ".jpg",
        "image/png" => ".png",
        "image/gif" => ".gif",
        "image/webp" => ".webp",
        "image/bmp" => ".bmp",
        "image/svg+xml" => ".svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => ".wav",
        "audio/mpeg" => ".mp3",
        "audio/ogg" => ".ogg",
        "audio/flac" => ".flac",
        m if m.starts_with("audio/") => ".ogg",
        "application/pdf" => ".pdf",
        "application/zip" => ".zip",
        "application/json" => ".json",
        "text/plain" => ".txt",
        m if m.starts_with("image/") => ".png",
        _ => ".bin",
    }
}

/// The last path segment of `uri` as a safe file name.
fn resource_file_name(uri: &str, mime: &str) -> String {
    let path = uri.split(['?', '#']).next().unwrap_or("");
    let last = path.rsplit('/').next().unwrap_or("");
    let mut name: String = last
        .chars()
        .filter(|c| !c.is_control() && *c != '\\')
        .collect::<String>()
        .trim()
        .to_owned();
    if name.len() > 150 {
        name = name.chars().take(150).collect();
    }
    if name.is_empty() || name == "." || name == ".." || name.contains(':') {
        format!("resource{}", extension(mime))
    } else {
        name
    }
}

fn short_id() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    id[..12].to_owned()
}

/// The cache directory under a Hermes home.
pub fn cache_root(hermes_home: &Path) -> PathBuf {
    hermes_home.join("cache")
}

#[cfg(test)]
#[path = "result_tests.rs"]
mod tests;
