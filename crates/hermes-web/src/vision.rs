//! `vision_analyze`: an image (a file, an http(s) address or a `data:` URL)
//! loaded and checked as the reference loads it, then described by a model
//! that can see (`auxiliary.vision`, else the session's own), with the
//! reference's prompt, result shape and error hints.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::url_safety::UrlPolicy;
use hermes_tools::{Tool, ToolContext, ToolError, ToolResult};
use serde_json::{Value, json};

use crate::search::pretty;

/// The biggest image taken in.
const MAX_INGEST: usize = 50 * 1024 * 1024;
/// The biggest image sent to a model (as a `data:` URL).
const MAX_SEND: usize = 20 * 1024 * 1024;

/// A model that looks at an image and answers about it.
pub trait VisionModel: Send + Sync {
    /// The model's name, for error hints.
    fn name(&self) -> String;
    /// Its answer to `prompt` about the image at `data_url`.
    fn look<'a>(
        &'a self,
        data_url: &'a str,
        prompt: &'a str,
    ) -> BoxFuture<'a, Result<String, String>>;
}

/// The media type of image bytes, from their first bytes.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Where an image comes from.
enum Source {
    Data(String),
    Web(String),
    File(PathBuf),
}

fn source(raw: &str, cwd: &Path, user_home: Option<&Path>) -> Result<Source, String> {
    let raw = raw.trim();
    if raw.starts_with("data:") {
        return Ok(Source::Data(raw.to_owned()));
    }
    if raw.starts_with("http://") || raw.starts_with("https://") {
        return Ok(Source::Web(raw.to_owned()));
    }
    let path = raw.strip_prefix("file://").unwrap_or(raw);
    if path.contains("://") {
        return Err("Unrecognized image source scheme. Use an http(s) URL, a local file path, a file:// URI, or a data: URL.".into());
    }
    Ok(Source::File(hermes_tools::paths::resolve(
        cwd, path, user_home,
    )))
}

/// Everything a load needs.
pub struct Loader<'a> {
    /// The fetch client (redirects checked by hand).
    pub http: &'a crate::extract::fetch::Fetcher,
    /// Which addresses may be fetched.
    pub policy: UrlPolicy,
    /// Relative paths resolve here.
    pub cwd: &'a Path,
    /// `~`.
    pub user_home: Option<&'a Path>,
    /// `HERMES_HOME`, whose secrets are never read.
    pub hermes_home: &'a Path,
}

impl Loader<'_> {
    /// The image at `raw` as a `data:` URL.
    pub async fn load(&self, raw: &str) -> Result<String, String> {
        let bytes = match source(raw, self.cwd, self.user_home)? {
            Source::Data(url) => {
                let (header, data) = url.split_once(',').ok_or("malformed data: URL")?;
                if !header.ends_with(";base64") {
                    return Err("data: URL must be base64-encoded".into());
                }
                if data.len() > MAX_INGEST * 4 / 3 {
                    return Err("data: URL exceeds size limit".into());
                }
                base64::engine::general_purpose::STANDARD
                    .decode(data.trim())
                    .map_err(|e| format!("invalid base64 in data: URL: {e}"))?
            }
            Source::Web(url) => {
                let (_, _, body) = crate::extract::fetch::fetch_raw(
                    self.http,
                    &url,
                    self.policy,
                    "image/*,*/*;q=0.8",
                )
                .await
                .map_err(|e| {
                    if e.starts_with("Blocked") {
                        "blocked: unsafe or private URL".to_owned()
                    } else {
                        e
                    }
                })?;
                body
            }
            Source::File(path) => {
                let real = path
                    .canonicalize()
                    .map_err(|_| format!("image file not found: '{}'", path.display()))?;
                if hermes_tools::paths::is_secret(&real, self.user_home, self.hermes_home) {
                    return Err(format!("refused: '{}' is a protected file", path.display()));
                }
                let size = std::fs::metadata(&real).map(|m| m.len()).unwrap_or(0);
                if size > MAX_INGEST as u64 {
                    return Err(format!("Image too large ({size} bytes, max {MAX_INGEST})"));
                }
                std::fs::read(&real)
                    .map_err(|e| format!("cannot read '{}': {e}", path.display()))?
            }
        };
        let mime = sniff(&bytes).ok_or_else(|| {
            "source is not a recognized image (PNG, JPEG, GIF and WebP are read)".to_owned()
        })?;
        let url = format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&bytes)
        );
        if url.len() > MAX_SEND {
            return Err(format!(
                "Image too large for vision API: base64 payload is {:.1} MB (limit 20 MB). Compress or crop the image and try again.",
                url.len() as f64 / 1_048_576.0
            ));
        }
        Ok(url)
    }
}

/// The reference's hint for a failed analysis.
fn hint(model: &str, error: &str) -> String {
    let lower = error.to_ascii_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if any(&[
        "402",
        "insufficient",
        "payment required",
        "credits",
        "billing",
    ]) {
        format!(
            "Insufficient credits or payment required. Please top up your API provider account and try again. Error: {error}"
        )
    } else if any(&[
        "does not support",
        "not support image",
        "content_policy",
        "multimodal",
        "unrecognized request argument",
        "image input",
    ]) {
        format!(
            "{model} does not support vision or our request was not accepted by the server. Error: {error}"
        )
    } else if any(&["invalid_request", "image_url"]) {
        format!(
            "The vision API rejected the image. This can happen when the image is in an unsupported format, corrupted, or too large. Try a smaller JPEG/PNG and retry. Error: {error}"
        )
    } else {
        format!(
            "There was a problem with the request and the image could not be analyzed. Error: {error}"
        )
    }
}

/// The `vision_analyze` tool.
pub struct VisionTool {
    model: Arc<dyn VisionModel>,
    fetcher: crate::extract::fetch::Fetcher,
    policy: UrlPolicy,
    hermes_home: PathBuf,
}

impl std::fmt::Debug for VisionTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("VisionTool")
    }
}

impl VisionTool {
    /// A tool asking `model` about images, fetching URLs over `fetcher`.
    pub fn new(
        model: Arc<dyn VisionModel>,
        policy: UrlPolicy,
        hermes_home: PathBuf,
        fetcher: crate::extract::fetch::Fetcher,
    ) -> Self {
        Self {
            model,
            fetcher,
            policy,
            hermes_home,
        }
    }
}

impl Tool for VisionTool {
    fn name(&self) -> &str {
        "vision_analyze"
    }

    fn toolset(&self) -> &str {
        "vision"
    }

    fn emoji(&self) -> &str {
        "👁️"
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "vision_analyze".into(),
            description: "Look at an image and answer a question about it. Accepts a URL, a local \
                file path, or a data URL. Call it whenever the user points at an image (a path in \
                their message, a URL in tool output, a browser screenshot …); a model that can see \
                describes the image and answers your question."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "image_url": {"type": "string", "description": "Image URL (http/https), local file path, or data: URL to load."},
                    "question": {"type": "string", "description": "Your specific question or request about the image."}
                },
                "required": ["image_url", "question"]
            }),
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let raw = args["image_url"].as_str().unwrap_or("").trim();
            if raw.is_empty() {
                return Ok(json!({"error": "image_url is required", "success": false}).to_string());
            }
            let question = args["question"].as_str().unwrap_or("").trim();
            let loader = Loader {
                http: &self.fetcher,
                policy: self.policy,
                cwd: &ctx.cwd,
                user_home: ctx.homes.home.as_deref(),
                hermes_home: &self.hermes_home,
            };
            let failed = |e: String| {
                Ok(pretty(
                    &json!({"success": false, "error": format!("Error analyzing image: {e}"),
                                  "analysis": hint(&self.model.name(), &e)}),
                ))
            };
            let image = tokio::select! {
                _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                loaded = loader.load(raw) => loaded,
            };
            let image = match image {
                Ok(image) => image,
                Err(e) => return failed(e),
            };
            let prompt = format!(
                "Fully describe and explain everything about this image, then answer the following question:\n\n{question}"
            );
            let answer = tokio::select! {
                _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                answer = self.model.look(&image, &prompt) => answer,
            };
            match answer {
                Ok(text) if !text.trim().is_empty() => {
                    Ok(pretty(&json!({"success": true, "analysis": text.trim()})))
                }
                Ok(_) => Ok(pretty(&json!({"success": true,
                    "analysis": "There was a problem with the request and the image could not be analyzed."}))),
                Err(e) => failed(e),
            }
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    fn loader<'a>(http: &'a crate::extract::fetch::Fetcher, dir: &'a Path) -> Loader<'a> {
        Loader {
            http,
            policy: UrlPolicy::default(),
            cwd: dir,
            user_home: Some(dir),
            hermes_home: dir,
        }
    }

    #[tokio::test]
    async fn files_and_data_urls_load_and_other_things_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let http = crate::extract::fetch::Fetcher::default();
        let png = base64::engine::general_purpose::STANDARD
            .decode(PNG_1X1)
            .unwrap();
        std::fs::write(dir.path().join("dot.png"), &png).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "just text").unwrap();
        let l = loader(&http, dir.path());
        let url = l.load("dot.png").await.unwrap();
        assert!(url.starts_with("data:image/png;base64,iVBOR"));
        assert_eq!(
            l.load(&format!("data:image/png;base64,{PNG_1X1}"))
                .await
                .unwrap(),
            url
        );
        assert!(
            l.load("notes.txt")
                .await
                .unwrap_err()
                .contains("not a recognized image")
        );
        assert!(
            l.load("missing.png")
                .await
                .unwrap_err()
                .starts_with("image file not found")
        );
        assert!(
            l.load("data:image/png,raw")
                .await
                .unwrap_err()
                .contains("base64")
        );
        assert!(
            l.load("ftp://x/y.png")
                .await
                .unwrap_err()
                .contains("Unrecognized image source")
        );
        std::fs::create_dir_all(dir.path().join(".ssh")).unwrap();
        std::fs::write(dir.path().join(".ssh/id.png"), &png).unwrap();
        assert!(
            l.load("~/.ssh/id.png")
                .await
                .unwrap_err()
                .contains("protected")
        );
        let blocked = l.load("http://127.0.0.1:9/x.png").await.unwrap_err();
        assert_eq!(blocked, "blocked: unsafe or private URL");
    }

    #[test]
    fn hints_follow_the_reference() {
        assert!(hint("m", "HTTP 402 payment required").starts_with("Insufficient credits"));
        assert!(
            hint("gpt-x", "model does not support image input")
                .starts_with("gpt-x does not support vision")
        );
        assert!(hint("m", "boom").starts_with("There was a problem"));
        assert_eq!(sniff(b"GIF89a..."), Some("image/gif"));
    }
}
