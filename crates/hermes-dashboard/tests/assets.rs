//! The page's script parses (a syntax error would leave a blank page that
//! only the browser tests see); checked with `node --check` where node is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[test]
fn the_script_parses() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/app.js");
    let Ok(out) = std::process::Command::new("node")
        .args(["--check", script])
        .output()
    else {
        eprintln!("SKIPPED: node is not installed");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_page_loads_nothing_inline_or_from_elsewhere() {
    let page = include_str!("../assets/index.html");
    assert!(page.contains("{{CSRF}}") && page.contains("/assets/app.js"));
    assert!(
        !page.contains("<script>") && !page.contains("style=\""),
        "inline code breaks the CSP"
    );
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "nothing from elsewhere"
    );
    let script = include_str!("../assets/app.js");
    // (A comment may say why it is never used.)
    let code: String = script
        .lines()
        .filter(|l| !l.trim_start().starts_with(['*', '/']))
        .collect();
    assert!(!code.contains("innerHTML") && !code.contains("insertAdjacentHTML"));
}
