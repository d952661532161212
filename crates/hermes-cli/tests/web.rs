//! The web tools through the binary, against loopback servers only: a
//! SearXNG-compatible search endpoint, an HTML page, a PDF, a long page and
//! a redirect to a cloud metadata address.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::web::{LoopbackWeb, Page, pdf};
use support::*;

const RAIN_PAGE: &str = r#"<!doctype html><html><head><title>Rain in the valley</title>
<script>trackVisit()</script></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<main><h1>Rainfall this week</h1>
<p>Monday had <strong>12 mm</strong>, see <a href="https://example.org/data">the data</a>.</p>
<img alt="rain chart" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk">
<ul><li>Tuesday: 3 mm</li><li>Wednesday: dry</li></ul></main>
<footer>Copyright the valley</footer></body></html>"#;

/// The newest tool result in a request, parsed.
fn last_result(body: &Value) -> Value {
    let tools = messages_with_role(body, "tool");
    let last = tools.last().unwrap();
    serde_json::from_str(last["content"].as_str().unwrap_or("null")).unwrap_or(Value::Null)
}

fn setup(web: &LoopbackWeb) -> Sandbox {
    let sb = Sandbox::start();
    sb.add_config("web:\n  backend: searxng\nsecurity:\n  allow_private_urls: true\n");
    std::fs::write(
        sb.home.path().join(".env"),
        format!("SEARXNG_URL={}\n", web.url("")),
    )
    .unwrap();
    sb
}

#[test]
fn the_model_searches_then_reads_a_page_and_a_pdf_and_a_metadata_redirect_is_refused() {
    let web = LoopbackWeb::start();
    web.put(
        "/rain.html",
        Page::ok("text/html; charset=utf-8", RAIN_PAGE),
    );
    web.put(
        "/report.pdf",
        Page::ok("application/pdf", pdf("Quarterly rainfall was 42 mm")),
    );
    web.put(
        "/go",
        Page::redirect("http://169.254.169.254/latest/meta-data/"),
    );
    let sb = setup(&web);
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "web_search",
            &json!({"query": "valley rainfall", "limit": 5}).to_string(),
        ),
        Reply::tool_call(
            "c2",
            "web_extract",
            &json!({"urls": [web.url("/rain.html"), web.url("/report.pdf"), web.url("/go")]})
                .to_string(),
        ),
        Reply::text("Monday had 12 mm."),
    ]);
    let out = sb.chat("How much rain fell?", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Monday had 12 mm."));
    let requests = sb.requests();
    assert_eq!(requests.len(), 3);
    // Both tools were offered, with the reference's names.
    let names = tool_names(&requests[0]);
    assert!(
        names.contains(&"web_search".to_owned()) && names.contains(&"web_extract".to_owned()),
        "{names:?}"
    );
    // The search went to SearXNG and came back ranked by score.
    let searched = &last_result(&requests[1]);
    assert_eq!(searched["success"], true, "{searched}");
    let hits = searched["data"]["web"].as_array().unwrap();
    assert_eq!(hits[0]["title"], "Quarterly report (PDF)");
    assert_eq!(hits[0]["position"], 1);
    assert_eq!(hits[1]["url"], web.url("/rain.html"));
    assert!(
        web.hits
            .lock()
            .unwrap()
            .iter()
            .any(|h| h.starts_with("/search?q=valley") && h.contains("format=json"))
    );
    // The page came back as markdown without its navigation, scripts or inline image data.
    let extracted = &last_result(&requests[2]);
    let rows = extracted["results"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let page = &rows[0];
    assert_eq!(page["title"], "Rain in the valley");
    assert!(page["error"].is_null());
    let md = page["content"].as_str().unwrap();
    assert!(md.contains("# Rainfall this week"), "{md}");
    assert!(
        md.contains("Monday had **12 mm**, see [the data](https://example.org/data)."),
        "{md}"
    );
    assert!(
        md.contains("[IMAGE: rain chart]") && !md.contains("base64"),
        "{md}"
    );
    for gone in ["trackVisit", "About", "Copyright"] {
        assert!(!md.contains(gone), "{gone}: {md}");
    }
    // The PDF was read to text.
    let report = &rows[1];
    assert!(report["error"].is_null(), "{report}");
    assert!(
        report["content"]
            .as_str()
            .unwrap()
            .contains("Quarterly rainfall was 42 mm"),
        "{report}"
    );
    // The redirect to the metadata service was refused before it was followed.
    let refused = rows[2]["error"].as_str().unwrap();
    assert!(
        refused.starts_with("Blocked") && refused.contains("metadata"),
        "{refused}"
    );
    assert!(rows[2]["content"].as_str().unwrap().is_empty());
}

#[test]
fn long_pages_come_back_as_head_and_tail_with_the_whole_text_on_disk() {
    let web = LoopbackWeb::start();
    let paragraphs: String = (0..3000)
        .map(|i| format!("<p>Paragraph {i:04} of a long article about rivers.</p>"))
        .collect();
    web.put(
        "/long.html",
        Page::ok(
            "text/html",
            format!("<html><body><article>{paragraphs}</article></body></html>"),
        ),
    );
    let sb = setup(&web);
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "web_extract",
            &json!({"urls": [web.url("/long.html")], "char_limit": 4000}).to_string(),
        ),
        Reply::text("done"),
    ]);
    let out = sb.chat("read it", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let row = &last_result(&sb.requests()[1])["results"][0];
    let content = row["content"].as_str().unwrap();
    assert!(content.starts_with("Paragraph 0000"), "{content}");
    assert!(content.contains("Paragraph 2999 of a long article"));
    assert!(content.contains("──────── [TRUNCATED] ────────"));
    let saved = content
        .split("Full text saved to: ")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    assert!(
        saved.starts_with(
            sb.home
                .path()
                .canonicalize()
                .unwrap()
                .join("cache/web")
                .to_str()
                .unwrap()
        ),
        "{saved}"
    );
    let whole = std::fs::read_to_string(saved).unwrap();
    assert!(whole.contains("Paragraph 1500 of a long article"));
    assert!(content.chars().count() < 5000);
}

#[test]
fn private_addresses_are_refused_unless_allowed_and_secrets_never_leave() {
    let web = LoopbackWeb::start();
    web.put("/rain.html", Page::ok("text/html", RAIN_PAGE));
    let sb = Sandbox::start();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "web_extract",
            &json!({"urls": [web.url("/rain.html")]}).to_string(),
        ),
        Reply::tool_call(
            "c2",
            "web_extract",
            &json!({"urls": ["https://example.org/?api_key=abc123"]}).to_string(),
        ),
        Reply::text("ok"),
    ]);
    let out = sb.chat("read it", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = sb.requests();
    let row = last_result(&requests[1])["results"][0].clone();
    let error = row["error"].as_str().unwrap();
    assert!(
        error.contains("private") && error.contains("allow_private_urls"),
        "{error}"
    );
    assert!(web.hits.lock().unwrap().is_empty(), "nothing was fetched");
    let refused = &last_result(&requests[2]);
    assert_eq!(refused["success"], false);
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("credential-like query parameter (api_key)")
    );
}

const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

#[test]
fn vision_analyze_shows_the_image_to_the_vision_model_and_returns_its_answer() {
    use base64::Engine;
    let web = LoopbackWeb::start();
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG_1X1)
        .unwrap();
    web.put("/dot.png", Page::ok("image/png", png.clone()));
    let sb = Sandbox::start();
    let config = sb.home.path().join("config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replace(
        "auxiliary:\n",
        "auxiliary:\n  vision:\n    model: vision-model\n",
    );
    std::fs::write(&config, text).unwrap();
    sb.add_config("security:\n  allow_private_urls: true\n");
    std::fs::write(sb.work_path("chart.png"), &png).unwrap();
    std::fs::write(sb.work_path("notes.txt"), "not an image").unwrap();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "vision_analyze",
            &json!({"image_url": "chart.png", "question": "What colour is it?"}).to_string(),
        ),
        Reply::text("A single dark pixel on a transparent background."),
        Reply::tool_call(
            "c2",
            "vision_analyze",
            &json!({"image_url": web.url("/dot.png"), "question": "And this one?"}).to_string(),
        ),
        Reply::text("The same pixel."),
        Reply::tool_call(
            "c3",
            "vision_analyze",
            &json!({"image_url": "notes.txt", "question": "?"}).to_string(),
        ),
        Reply::text("It is one dark pixel."),
    ]);
    let out = sb.chat("what is in chart.png?", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("It is one dark pixel."));
    let requests = sb.mock.chat_requests();
    assert_eq!(
        requests.len(),
        6,
        "three turns of the main model, two looks"
    );
    // The vision model got the image as a content part with the reference's prompt.
    let look = &requests[1];
    assert_eq!(look["model"], "vision-model");
    let parts = look["messages"][0]["content"].as_array().unwrap();
    assert!(parts[0]["text"].as_str().unwrap().starts_with(
        "Fully describe and explain everything about this image, then answer the following question:\n\nWhat colour is it?"
    ));
    assert_eq!(
        parts[1]["image_url"]["url"],
        format!("data:image/png;base64,{PNG_1X1}")
    );
    let answered = last_result(&requests[2]);
    assert_eq!(answered["success"], true, "{answered}");
    assert_eq!(
        answered["analysis"],
        "A single dark pixel on a transparent background."
    );
    // A URL is fetched (through the URL policy) and shown the same way.
    assert!(
        requests[3]["messages"][0]["content"][1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    // Something that is not an image is refused before any model sees it.
    let refused = last_result(&requests[5]);
    assert_eq!(refused["success"], false);
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("not a recognized image"),
        "{refused}"
    );
}

#[test]
fn an_image_named_in_a_repl_message_reaches_the_model_natively_or_described() {
    use base64::Engine;
    use support::pty::{PROMPT, Pane, tmux_available};
    if !tmux_available() {
        return;
    }
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG_1X1)
        .unwrap();
    // A model that sees gets the image itself, with a line naming it.
    let sb = Sandbox::start();
    sb.add_config("agent:\n  image_input_mode: native\n");
    std::fs::write(sb.work_path("shot.png"), &png).unwrap();
    sb.mock.push(Reply::text("A dark pixel."));
    let pane = Pane::start(&sb, "imgnative", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("what is in @shot.png?");
    pane.wait_for("A dark pixel.");
    let asked = sb.mock.chat_requests()[0].clone();
    let user = messages_with_role(&asked, "user");
    let parts = user.last().unwrap()["content"].as_array().unwrap().clone();
    let caption = parts[0]["text"].as_str().unwrap();
    assert!(
        caption.starts_with("what is in @shot.png?\n\n[Image attached at: "),
        "{caption}"
    );
    assert_eq!(
        parts[1]["image_url"]["url"],
        format!("data:image/png;base64,{PNG_1X1}")
    );
    drop(pane);
    // One that cannot see gets what the vision model saw (the mock again here).
    let sb = Sandbox::start();
    std::fs::write(sb.work_path("shot.png"), &png).unwrap();
    sb.mock.push_all([
        Reply::text("One dark pixel on transparency."),
        Reply::text("It is a pixel."),
    ]);
    let pane = Pane::start(&sb, "imgtext", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("what is in @shot.png?");
    pane.wait_for("It is a pixel.");
    let requests = sb.mock.chat_requests();
    assert_eq!(requests.len(), 2);
    let look = &requests[0]["messages"][0]["content"];
    assert!(
        look[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Describe everything visible in this image")
    );
    let user = messages_with_role(&requests[1], "user");
    let text = user.last().unwrap()["content"].as_str().unwrap().to_owned();
    assert!(
        text.starts_with(
            "[The user sent an image. What it shows:\nOne dark pixel on transparency.]"
        ),
        "{text}"
    );
    assert!(text.ends_with("what is in @shot.png?"), "{text}");
}
