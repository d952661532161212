//! Cost of reading a big page (issue 20): a 2 MB HTML article turned into
//! markdown the way `web_extract` does it (parse, main content, htmd,
//! image placeholders, head+tail with the whole text on disk).
//!
//! `cargo bench -p hermes-web --bench extract` prints the median time of 10
//! conversions and the process's peak RSS growth. The reference has no
//! equivalent to measure offline: its `web_extract` always hands pages to a
//! third-party service (Firecrawl, Tavily, Exa, Parallel).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

fn kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A page like a long documentation or news page: navigation, an article of
/// sections with paragraphs, links, lists, tables and code, a footer.
fn page(target_bytes: usize) -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>A long page</title><style>body{font:14px sans}</style>\
         <script>window.analytics=1</script></head><body><nav><ul>",
    );
    for i in 0..200 {
        html.push_str(&format!(
            "<li><a href=\"/section/{i}\">Section {i}</a></li>"
        ));
    }
    html.push_str("</ul></nav><main><article><h1>The long page</h1>");
    let mut section = 0;
    while html.len() < target_bytes {
        section += 1;
        html.push_str(&format!("<h2 id=\"s{section}\">Section {section}</h2>"));
        for p in 0..6 {
            html.push_str(&format!(
                "<p>Paragraph {p} of section {section} explains <strong>rivers</strong>, \
                 <em>rainfall</em> and <a href=\"https://example.org/{section}/{p}\">a source</a> \
                 in enough words to look like prose that people actually write on the web.</p>"
            ));
        }
        html.push_str("<ul><li>one point</li><li>another point</li><li>a third</li></ul>");
        html.push_str("<table><tr><th>Day</th><th>mm</th></tr><tr><td>Mon</td><td>3</td></tr><tr><td>Tue</td><td>0</td></tr></table>");
        html.push_str(
            "<pre><code>let rain = measure(&amp;gauge);\nprintln!(\"{rain}\");</code></pre>",
        );
    }
    html.push_str("</article></main><footer>Copyright</footer></body></html>");
    html
}

fn main() {
    let html = page(2 * 1024 * 1024);
    let cache = tempfile::tempdir().unwrap();
    let before = kib("VmHWM:");
    let mut times: Vec<Duration> = Vec::new();
    let mut out_len = 0;
    for _ in 0..10 {
        let started = Instant::now();
        let read = hermes_web::extract::page::html_to_markdown(&html);
        let clean = hermes_web::extract::page::placeholders(&read.markdown);
        let fitted = hermes_web::extract::truncate::fit(
            &clean,
            "https://example.org/long",
            15_000,
            cache.path(),
        );
        times.push(started.elapsed());
        out_len = clean.len();
        assert!(fitted.contains("[TRUNCATED]"));
    }
    times.sort();
    println!(
        "web_extract 2 MB HTML ({} bytes → {} bytes of markdown): median {:.1?}, min {:.1?}; peak RSS +{} KiB (now {} KiB)",
        html.len(),
        out_len,
        times[times.len() / 2],
        times[0],
        kib("VmHWM:").saturating_sub(before),
        kib("VmHWM:")
    );
}
