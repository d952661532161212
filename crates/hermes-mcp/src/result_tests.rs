#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;

fn cache() -> (tempfile::TempDir, MediaCache) {
    let dir = tempfile::tempdir().unwrap();
    let cache = MediaCache::new(dir.path().join("cache"));
    (dir, cache)
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn text_blocks_join_with_newlines() {
    let (_d, cache) = cache();
    let out = render_call(
        &json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        "s",
        &cache,
    );
    assert_eq!(parse(&out), json!({"result": "a\nb"}));
}

#[test]
fn structured_content_rides_along_or_stands_alone() {
    let (_d, cache) = cache();
    let both = render_call(
        &json!({"content": [{"type": "text", "text": "5"}], "structuredContent": {"result": 5}}),
        "s",
        &cache,
    );
    assert_eq!(
        parse(&both),
        json!({"result": "5", "structuredContent": {"result": 5}})
    );
    let only = render_call(
        &json!({"content": [], "structuredContent": {"x": 1}}),
        "s",
        &cache,
    );
    assert_eq!(parse(&only), json!({"result": {"x": 1}}));
}

#[test]
fn is_error_results_become_tool_errors() {
    let (_d, cache) = cache();
    let out = render_call(
        &json!({"isError": true, "content": [{"type": "text", "text": "boom"}]}),
        "s",
        &cache,
    );
    assert_eq!(parse(&out), json!({"error": "boom"}));
    let bare = render_call(&json!({"isError": true, "content": []}), "s", &cache);
    assert_eq!(parse(&bare), json!({"error": "MCP tool returned an error"}));
}

#[test]
fn images_are_saved_and_referenced() {
    let (_d, cache) = cache();
    let png = b"\x89PNG\r\n\x1a\n0000";
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    let out = render_call(
        &json!({"content": [{"type": "image", "data": data, "mimeType": "image/png"}]}),
        "s",
        &cache,
    );
    let text = parse(&out)["result"].as_str().unwrap().to_owned();
    let path = text.strip_prefix("MEDIA:").unwrap();
    assert!(path.ends_with(".png"), "{path}");
    assert_eq!(std::fs::read(path).unwrap(), png);
}

#[test]
fn non_image_bytes_labelled_image_are_dropped() {
    let (_d, cache) = cache();
    let data = base64::engine::general_purpose::STANDARD.encode(b"<html>nope</html>");
    let out = render_call(
        &json!({"content": [{"type": "image", "data": data, "mimeType": "image/png"}]}),
        "s",
        &cache,
    );
    assert_eq!(parse(&out), json!({"result": ""}));
}

#[test]
fn resource_links_point_at_read_resource() {
    let (_d, cache) = cache();
    let out = render_call(
        &json!({"content": [{"type": "resource_link", "uri": "demo://r/1", "name": "one", "mimeType": "text/plain"}]}),
        "every-thing",
        &cache,
    );
    assert_eq!(
        parse(&out)["result"],
        "[MCP resource link: uri=demo://r/1, name=one, mimeType=text/plain — fetch it with mcp__every_thing__read_resource]"
    );
}

#[test]
fn embedded_resources_give_text_or_a_saved_file() {
    let (_d, cache) = cache();
    let out = render_call(
        &json!({"content": [{"type": "resource", "resource": {"uri": "x://a", "text": "inline"}}]}),
        "s",
        &cache,
    );
    assert_eq!(parse(&out)["result"], "inline");
    let blob = base64::engine::general_purpose::STANDARD.encode(b"%PDF-1.4");
    let out = render_call(
        &json!({"content": [{"type": "resource", "resource": {"uri": "file:///r/report.pdf", "blob": blob, "mimeType": "application/pdf"}}]}),
        "s",
        &cache,
    );
    let text = parse(&out)["result"].as_str().unwrap().to_owned();
    assert!(text.starts_with("[MCP resource saved to "), "{text}");
    assert!(
        text.contains("_report.pdf (application/pdf, 8 bytes)"),
        "{text}"
    );
}
