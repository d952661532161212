//! Images a person points at in a message (`/path/shot.png`, `~/a.jpg`,
//! `@chart.png`, `https://…/x.png`): shown to a model that can see as image
//! content, or — for one that cannot — described first by the vision model,
//! as the reference's `agent.image_input_mode` decides (`auto`, `native`,
//! `text`).

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

const EXTENSIONS: &str = "png|jpg|jpeg|gif|webp";

static LOCAL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)(?:^|[\s(\[])(?P<path>@[\w.\-/~]+\.(?:{EXTENSIONS})|(?:~/|/)(?:[\w.\-]+/)*[\w.\-]+\.(?:{EXTENSIONS}))\b"
    ))
    .ok()
});
static URL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?i)https?://[^\s<>"']+?\.(?:{EXTENSIONS})(?:\?[^\s<>"']*)?"#
    ))
    .ok()
});

/// Image files (that exist) and image URLs a message names, outside code.
pub fn references(text: &str, cwd: &Path, home: Option<&Path>) -> (Vec<PathBuf>, Vec<String>) {
    // Code spans are examples, not attachments: blank them out first.
    let mut plain = String::with_capacity(text.len());
    let mut in_fence = false;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            plain.push('\n');
            continue;
        }
        if in_fence {
            plain.push('\n');
            continue;
        }
        let mut in_tick = false;
        for c in line.chars() {
            if c == '`' {
                in_tick = !in_tick;
                plain.push(' ');
            } else {
                plain.push(if in_tick { ' ' } else { c });
            }
        }
    }
    let mut paths: Vec<PathBuf> = Vec::new();
    if let Some(re) = LOCAL.as_ref() {
        for found in re.captures_iter(&plain) {
            let raw = &found["path"];
            let raw = raw.strip_prefix('@').unwrap_or(raw);
            let path = hermes_tools::paths::resolve(cwd, raw, home);
            if path.is_file() && !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    let mut urls: Vec<String> = Vec::new();
    if let Some(re) = URL.as_ref() {
        for found in re.find_iter(&plain) {
            let url = found
                .as_str()
                .trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '>']);
            if !urls.iter().any(|u| u == url) {
                urls.push(url.to_owned());
            }
        }
    }
    (paths, urls)
}

/// Whether a model is known to take images (for `image_input_mode: auto`):
/// the vision-capable families, by name.
pub fn sees(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    [
        "gpt-4o",
        "gpt-4.1",
        "gpt-5",
        "o3",
        "o4",
        "claude",
        "gemini",
        "gemma-3",
        "llava",
        "vision",
        "-vl",
        "pixtral",
        "grok-4",
        "llama-4",
        "qwen2.5-vl",
        "qwen3-vl",
        "mistral-medium",
        "mistral-small-3",
    ]
    .iter()
    .any(|family| model.contains(family))
}

/// The text a model that cannot see gets for each image: what the vision
/// model saw, and how to look again.
pub fn described(text: &str, seen: &[(String, Result<String, String>)]) -> String {
    let mut parts: Vec<String> = seen
        .iter()
        .map(|(source, description)| match description {
            Ok(description) => format!(
                "[The user sent an image. What it shows:\n{description}]\n[For a closer look, use vision_analyze with image_url: {source}]"
            ),
            Err(_) => format!(
                "[The user sent an image that could not be looked at just now. Try vision_analyze with image_url: {source}]"
            ),
        })
        .collect();
    parts.push(text.to_owned());
    parts.join("\n\n")
}

/// The text that goes with images shown natively: a default question when
/// there is none, and a line naming each image so tools can be pointed at it.
pub fn captioned(text: &str, paths: &[PathBuf], urls: &[String]) -> String {
    let base = if text.trim().is_empty() {
        "What do you see in this image?"
    } else {
        text.trim()
    };
    let mut hints: Vec<String> = paths
        .iter()
        .map(|p| format!("[Image attached at: {}]", p.display()))
        .collect();
    hints.extend(urls.iter().map(|u| format!("[Image attached: {u}]")));
    format!("{base}\n\n{}", hints.join("\n"))
}

/// The prompt the vision model describes a user's image with.
pub const DESCRIBE: &str = "Describe everything visible in this image in thorough detail. Include any text, code, data, objects, people, layout, colors, and any other notable visual information.";

/// What a turn's message becomes: the text (captioned, or with the images
/// described) and the images to send with it (`given` are `data:` URLs the
/// front-end attached).
pub async fn prepare(
    services: &crate::services::Services,
    endpoint: &crate::endpoint::Endpoint,
    cwd: &Path,
    text: String,
    given: Vec<String>,
) -> (String, Vec<String>) {
    let setup = services.setup();
    let home = setup.env.get("HOME").map(PathBuf::from);
    let (paths, urls) = references(&text, cwd, home.as_deref());
    if paths.is_empty() && urls.is_empty() && given.is_empty() {
        return (text, given);
    }
    let web = services.web();
    let loader = hermes_web::vision::Loader {
        http: &web.fetcher,
        policy: web.settings.policy,
        cwd,
        user_home: home.as_deref(),
        hermes_home: setup.home.root(),
    };
    let model = endpoint.model.clone().unwrap_or_default();
    let mode = setup
        .config
        .raw
        .pointer("/agent/image_input_mode")
        .and_then(serde_json::Value::as_str)
        .map(str::to_ascii_lowercase);
    let native = match mode.as_deref() {
        Some("native") => true,
        Some("text") => false,
        _ => sees(&model),
    };
    if native {
        let mut images = given;
        let mut shown = Vec::new();
        for path in &paths {
            if let Ok(url) = loader.load(&path.display().to_string()).await {
                images.push(url);
                shown.push(path.clone());
            }
        }
        images.extend(urls.iter().cloned());
        if shown.is_empty() && urls.is_empty() {
            return (text, images);
        }
        return (captioned(&text, &shown, &urls), images);
    }
    // A model that cannot see gets what the vision model saw.
    let route = crate::auxiliary::vision_for(services, endpoint);
    let sources: Vec<String> = paths
        .iter()
        .map(|p| p.display().to_string())
        .chain(urls.iter().cloned())
        .chain(given.iter().cloned())
        .collect();
    let mut seen = Vec::new();
    for source in sources {
        let looked = match (&route, loader.load(&source).await) {
            (Some(route), Ok(image)) => {
                use hermes_web::vision::VisionModel;
                crate::auxiliary::VisionRoute(route.clone())
                    .look(&image, DESCRIBE)
                    .await
            }
            (None, _) => Err("no model that can see is configured".to_owned()),
            (_, Err(e)) => Err(e),
        };
        let label = if source.starts_with("data:") {
            "the attached image".to_owned()
        } else {
            source
        };
        seen.push((label, looked));
    }
    (described(&text, &seen), Vec::new())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn references_outside_code_are_found() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("chart.png"), b"x").unwrap();
        std::fs::write(dir.path().join("b.jpg"), b"x").unwrap();
        let abs = dir.path().join("b.jpg");
        let text = format!(
            "look at @chart.png and {} and https://x.test/a/pic.PNG?size=2. Not `@chart.png` or /missing.png\n```\n{}\n```",
            abs.display(),
            abs.display()
        );
        let (paths, urls) = references(&text, dir.path(), None);
        assert_eq!(paths, vec![dir.path().join("chart.png"), abs]);
        assert_eq!(urls, vec!["https://x.test/a/pic.PNG?size=2"]);
        assert!(references("no images here", dir.path(), None).0.is_empty());
    }

    #[test]
    fn models_that_see_and_texts_that_go_along() {
        assert!(sees("anthropic/claude-sonnet-4.5") && sees("gpt-4o-mini") && !sees("mock-model"));
        let caption = captioned("", &[PathBuf::from("/a.png")], &["https://x/y.png".into()]);
        assert_eq!(
            caption,
            "What do you see in this image?\n\n[Image attached at: /a.png]\n[Image attached: https://x/y.png]"
        );
        let text = described("what is it?", &[("/a.png".into(), Ok("A cat.".into()))]);
        assert!(
            text.starts_with("[The user sent an image. What it shows:\nA cat.]")
                && text.ends_with("what is it?")
        );
    }
}
