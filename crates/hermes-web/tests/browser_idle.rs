//! The browser closes itself once unused for `browser.inactivity_timeout`.
//! Needs a Chromium on PATH (skipped, with a message, without one).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use hermes_web::browser::{BrowserSettings, BrowserSlot};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unused_browser_is_closed_and_comes_back_when_needed() {
    let Some(exe) =
        hermes_web::browser::cdp::find_chromium(None, std::env::var("PATH").ok().as_deref())
    else {
        eprintln!("skipped: no Chromium on PATH");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let slot = BrowserSlot::new(BrowserSettings {
        executable: exe,
        headed: false,
        inactivity: Duration::from_secs(1),
        cache_dir: dir.path().to_path_buf(),
        policy: hermes_tools::url_safety::UrlPolicy::default(),
    });
    assert!(!slot.is_running().await, "nothing starts before it is used");
    let first = slot.navigate("about:blank").await;
    assert_eq!(first["success"], true, "{first}");
    assert!(slot.is_running().await);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!slot.is_running().await, "closed after a second unused");
    let again = slot.navigate("about:blank").await;
    assert_eq!(again["success"], true, "{again}");
    assert!(slot.is_running().await);
}
