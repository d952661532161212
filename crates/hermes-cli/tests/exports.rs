//! `hermes sessions export --format md|html [--redact] [--lineage logical]`
//! through the binary; the HTML page is opened in headless Chromium.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::*;

const PLANTED: &str = "sk-proj-PLANTEDsecret0123456789abcdefABCDEF";

#[test]
fn html_and_markdown_transcripts_render_and_redact() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        &serde_json::json!({"command": "echo <b>bold</b>"}).to_string(),
    ));
    sb.mock.push(Reply::text("Done: it printed the markup."));
    let out = sb.chat(&format!("my key is {PLANTED}, run echo"), &["--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let id = session_id_of(&out);

    let folder = sb.work_path("exports");
    let html = sb.run(&[
        "sessions",
        "export",
        folder.to_str().unwrap(),
        "--format",
        "html",
        "--redact",
        "--session-id",
        &id,
    ]);
    assert!(html.status.success(), "{}", stderr(&html));
    let page_path = folder.join(format!("{id}.html"));
    let page = std::fs::read_to_string(&page_path).unwrap();
    assert!(!page.contains(PLANTED), "redacted");
    assert!(
        page.contains("&lt;b&gt;bold&lt;/b&gt;") || page.contains("echo &lt;b&gt;"),
        "{page}"
    );

    let md = sb.run(&[
        "sessions",
        "export",
        folder.to_str().unwrap(),
        "--format",
        "md",
        "--session-id",
        &id,
    ]);
    assert!(md.status.success());
    let text = std::fs::read_to_string(folder.join(format!("{id}.md"))).unwrap();
    assert!(text.contains(PLANTED), "not redacted unless asked");
    assert!(text.contains("**Tool call** `terminal`") && text.contains("Done: it printed"));

    // The page renders in a browser: the transcript is there as text.
    let chromium = std::env::var("HERMES_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if std::path::Path::new(&chromium).is_file() {
        let dom = std::process::Command::new(&chromium)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-dev-shm-usage",
                "--dump-dom",
            ])
            .arg(format!("file://{}", page_path.display()))
            .output()
            .unwrap();
        let dom = String::from_utf8_lossy(&dom.stdout);
        assert!(dom.contains("Done: it printed the markup."), "{dom}");
        assert!(dom.contains("class=\"msg user\""), "{dom}");
        assert!(!dom.contains(PLANTED));
    }
}

#[test]
fn insights_sum_sessions_tokens_tools_and_hours() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        &serde_json::json!({"command": "echo hi"}).to_string(),
    ));
    sb.mock.push(Reply::text("one").with_usage(1000, 50));
    assert!(sb.chat("first", &["--yolo"]).status.success());
    sb.mock.push(Reply::text("two").with_usage(500, 20));
    assert!(sb.chat("second", &[]).status.success());

    let out = sb.run(&["insights", "--days", "7"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("📊 Hermes Insights") && text.contains("Last 7 days"),
        "{text}"
    );
    let line = |label: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label} in {text}"))
            .to_owned()
    };
    assert!(
        line("Sessions:").contains("Sessions:          2 "),
        "{text}"
    );
    assert!(line("Tool calls:").contains(" 1 "), "{text}");
    assert!(text.contains("mock-model"), "{text}");
    assert!(line("terminal").contains("100.0%"), "{text}");
    assert!(text.contains("Peak hours (UTC):"), "{text}");

    let none = sb.run(&["insights", "--source", "telegram"]);
    assert!(stdout(&none).contains("No sessions found in the last 30 days (source: telegram)."));
}

#[test]
fn config_check_names_keys_that_will_not_take_effect() {
    let sb = Sandbox::start();
    let clean = sb.run(&["config", "check"]);
    assert!(clean.status.success(), "{}", stdout(&clean));
    assert!(stdout(&clean).starts_with("✓ All"));
    sb.add_config("display:\n  skinn: dark\ntts:\n  provider: edge\n");
    let out = sb.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("✗ display.skinn: not a config key — did you mean display.skin?"),
        "{text}"
    );
    assert!(
        text.contains("⚠ tts.provider: read by the reference, not by hermes-rs yet"),
        "{text}"
    );
}
