//! A fetched page as markdown: HTML through a real parser (the main content
//! when the page marks it, navigation and scripts left out), PDFs through
//! poppler's `pdftotext`, text as it is; inline images reduced to
//! placeholders as the reference does.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::fetch::{Fetched, Kind};
use crate::dom;

/// Tags whose content is never part of what a page says.
const SKIPPED: [&str; 14] = [
    "script", "style", "noscript", "template", "svg", "iframe", "canvas", "nav", "footer", "aside",
    "form", "button", "select", "head",
];

/// A page's title and its text as markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// `<title>` (or the first heading).
    pub title: String,
    /// The content.
    pub markdown: String,
}

/// HTML as markdown: `<main>` (or the only `<article>`) when the page has
/// one, else the body.
pub fn html_to_markdown(html: &str) -> Page {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED.to_vec())
        .build();
    let doc = dom::parse(html);
    let title = dom::find(&doc, &|n| dom::tag(n) == "title")
        .map(|t| dom::text(&t))
        .filter(|t| !t.is_empty())
        .or_else(|| dom::find(&doc, &|n| dom::tag(n) == "h1").map(|h| dom::text(&h)))
        .unwrap_or_default();
    let articles = dom::find_all(&doc, &|n| dom::tag(n) == "article");
    let main = dom::find(&doc, &|n| {
        dom::tag(n) == "main" || dom::attr(n, "role").as_deref() == Some("main")
    })
    .or_else(|| (articles.len() == 1).then(|| articles[0].clone()))
    .or_else(|| dom::find(&doc, &|n| dom::tag(n) == "body"))
    .unwrap_or_else(|| doc.clone());
    // Dropping a document empties every node under it, even nodes still
    // held elsewhere (rcdom breaks cycles that way): keep it until done.
    let markdown = converter.tree_to_markdown(&main);
    drop(doc);
    Page { title, markdown }
}

static MD_DATA_IMAGE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"!\[(?P<alt>[^\]]*)\]\(\s*data:image/[^;]+;base64,[A-Za-z0-9+/=\s]+\)").ok()
});
static PAREN_DATA_IMAGE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\(\s*data:image/[^;]+;base64,[A-Za-z0-9+/=\s]+\)").ok());
static BARE_DATA_IMAGE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"data:image/[^;]+;base64,[A-Za-z0-9+/=]+").ok());

/// Inline base64 images as `[IMAGE: alt]` placeholders (real image URLs stay links).
pub fn placeholders(text: &str) -> String {
    if !text.contains("data:image/") {
        return text.to_owned();
    }
    let mut out = text.to_owned();
    if let Some(re) = MD_DATA_IMAGE.as_ref() {
        out = re
            .replace_all(&out, |c: &regex::Captures<'_>| {
                match c.name("alt").map(|a| a.as_str()) {
                    Some(alt) if !alt.is_empty() => format!("[IMAGE: {alt}]"),
                    _ => "[IMAGE]".to_owned(),
                }
            })
            .into_owned();
    }
    for re in [PAREN_DATA_IMAGE.as_ref(), BARE_DATA_IMAGE.as_ref()]
        .into_iter()
        .flatten()
    {
        out = re.replace_all(&out, "[IMAGE]").into_owned();
    }
    out
}

/// A PDF's text through `pdftotext` (poppler), in its own process so a
/// malformed file cannot take the gateway down.
pub async fn pdf_to_text(
    pdftotext: Option<&Path>,
    scratch: &Path,
    body: &[u8],
) -> Result<String, String> {
    let Some(pdftotext) = pdftotext else {
        return Err(
            "Reading PDFs needs pdftotext (poppler): install it (Debian/Ubuntu: apt install poppler-utils) and retry"
                .into(),
        );
    };
    std::fs::create_dir_all(scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let digest = sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(body));
    let file = scratch.join(format!("pdf-{}.pdf", hex::encode(digest)));
    std::fs::write(&file, body).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let run = tokio::process::Command::new(pdftotext)
        .args(["-enc", "UTF-8", "-nopgbrk"])
        .arg(&file)
        .arg("-")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(std::time::Duration::from_secs(60), run).await;
    let _ = std::fs::remove_file(&file);
    let output = output
        .map_err(|_| "pdftotext took longer than 60s".to_owned())?
        .map_err(|e| format!("cannot run pdftotext: {e}"))?;
    if !output.status.success() {
        let why = String::from_utf8_lossy(&output.stderr);
        return Err(format!("The PDF could not be read: {}", why.trim()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// The page in `fetched` as markdown.
pub async fn read(
    fetched: &Fetched,
    pdftotext: Option<&Path>,
    scratch: &Path,
) -> Result<Page, String> {
    match fetched.kind {
        Kind::Html => {
            let html = String::from_utf8_lossy(&fetched.body);
            Ok(html_to_markdown(&html))
        }
        Kind::Pdf => Ok(Page {
            title: fetched
                .final_url
                .rsplit('/')
                .next()
                .unwrap_or("")
                .split(['?', '#'])
                .next()
                .unwrap_or("")
                .to_owned(),
            markdown: pdf_to_text(pdftotext, scratch, &fetched.body).await?,
        }),
        Kind::Text => Ok(Page {
            title: String::new(),
            markdown: String::from_utf8_lossy(&fetched.body).into_owned(),
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_main_content_becomes_markdown() {
        let html = r#"<html><head><title>Rain report</title><style>p{}</style></head><body>
            <nav><a href="/">Home</a> | <a href="/about">About</a></nav>
            <main><h1>Rainfall</h1><p>It rained <b>3 mm</b> on <a href="https://x.test/mon">Monday</a>.</p>
            <ul><li>Tue: 0</li><li>Wed: 1</li></ul><script>track()</script></main>
            <footer>© 2026</footer></body></html>"#;
        let page = html_to_markdown(html);
        assert_eq!(page.title, "Rain report");
        assert!(page.markdown.starts_with("# Rainfall"), "{}", page.markdown);
        assert!(
            page.markdown
                .contains("It rained **3 mm** on [Monday](https://x.test/mon).")
        );
        assert!(page.markdown.contains("Tue: 0"));
        for gone in ["Home", "About", "track()", "© 2026", "p{}"] {
            assert!(!page.markdown.contains(gone), "{gone} in {}", page.markdown);
        }
    }

    #[test]
    fn without_a_main_the_body_is_read() {
        let page = html_to_markdown("<body><h1>Notes</h1><p>one</p></body>");
        assert_eq!(page.title, "Notes");
        assert_eq!(page.markdown, "# Notes\n\none");
    }

    #[test]
    fn inline_images_become_placeholders() {
        let text = "a ![chart](data:image/png;base64,iVBORw0KGgo=) b ![](data:image/gif;base64,R0lG) c data:image/png;base64,AAAA [x](https://x.test/i.png)";
        assert_eq!(
            placeholders(text),
            "a [IMAGE: chart] b [IMAGE] c [IMAGE] [x](https://x.test/i.png)"
        );
    }
}
