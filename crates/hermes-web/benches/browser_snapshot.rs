//! Cost of a browser snapshot of a large page (issue 20): a page of 2 000
//! rows (links, inputs, buttons, text) loaded in headless Chromium, its
//! accessibility tree fetched and rendered compact and full.
//!
//! `cargo bench -p hermes-web --bench browser_snapshot` (needs `chromium` on
//! PATH) prints the median of 5 runs for each and the snapshot sizes.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hermes_web::browser::{BrowserSettings, BrowserSlot};

fn page(rows: usize) -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Big table</title></head><body><main><h1>Inventory</h1><table>",
    );
    html.push_str("<tr><th>Item</th><th>Link</th><th>Count</th><th>Action</th></tr>");
    for i in 0..rows {
        html.push_str(&format!(
            "<tr><td>Item number {i} with a description long enough to be realistic</td>\
             <td><a href=\"/item/{i}\">details {i}</a></td><td><input aria-label=\"count {i}\" value=\"{i}\"></td>\
             <td><button>Order {i}</button></td></tr>"
        ));
    }
    html.push_str("</table></main></body></html>");
    html
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let Some(exe) =
        hermes_web::browser::cdp::find_chromium(None, std::env::var("PATH").ok().as_deref())
    else {
        println!("browser snapshot: skipped (no chromium on PATH)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.html");
    let html = page(2000);
    std::fs::write(&file, &html).unwrap();
    let url = format!("file://{}", file.display());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let slot = BrowserSlot::new(BrowserSettings {
            executable: exe,
            headed: false,
            inactivity: Duration::from_secs(600),
            cache_dir: dir.path().join("cache"),
            policy: hermes_tools::url_safety::UrlPolicy::default(),
        });
        let started = Instant::now();
        let first = slot.navigate("about:blank").await;
        assert_eq!(first["success"], true, "{first}");
        println!("browser start (first navigate): {:.2?}", started.elapsed());
        let mut loads = Vec::new();
        let mut compact = Vec::new();
        let mut full = Vec::new();
        let (mut compact_len, mut full_len, mut refs) = (0, 0, 0);
        for _ in 0..5 {
            let t = Instant::now();
            let nav = slot.navigate(&url).await;
            loads.push(t.elapsed());
            assert_eq!(nav["success"], true, "{nav}");
            let t = Instant::now();
            let snap = slot.snapshot(false).await;
            compact.push(t.elapsed());
            compact_len = snap["snapshot"].as_str().unwrap_or("").len();
            refs = snap["element_count"].as_u64().unwrap_or(0);
            let t = Instant::now();
            let snap = slot.snapshot(true).await;
            full.push(t.elapsed());
            full_len = snap["snapshot"].as_str().unwrap_or("").len();
        }
        println!(
            "page of {} KB, 2 000 rows: navigate+compact snapshot {:.2?}; compact snapshot {:.2?} ({refs} refs, {compact_len} chars sent); full snapshot {:.2?} ({full_len} chars sent)",
            html.len() / 1024,
            median(loads),
            median(compact),
            median(full),
        );
    });
}
