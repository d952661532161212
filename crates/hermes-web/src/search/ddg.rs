//! DuckDuckGo without a key: its HTML results page (what the reference's
//! `ddgs` package reads), parsed with a real HTML parser. The fallback when
//! no search backend is set up.

use std::time::Duration;

use super::Hit;
use crate::dom;
use crate::settings::Keys;

const DEFAULT_URL: &str = "https://html.duckduckgo.com/html/";

/// Searches DuckDuckGo's HTML endpoint (`HERMES_DDGS_URL` replaces it).
pub async fn search(
    http: &reqwest::Client,
    keys: &Keys,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, String> {
    let url = keys.ddgs_url.as_deref().unwrap_or(DEFAULT_URL);
    let sent = http
        .post(url)
        .form(&[("q", query), ("kl", "wt-wt")])
        .header("Accept", "text/html")
        .timeout(Duration::from_secs(30))
        .send()
        .await;
    let response = sent.map_err(|e| {
        if e.is_timeout() {
            "DuckDuckGo search timed out after 30s — DuckDuckGo may be rate-limiting or slow. Try again later or switch to a different search provider (web.backend).".to_owned()
        } else {
            "DuckDuckGo search failed: cannot connect".to_owned()
        }
    })?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!(
            "DuckDuckGo search failed: HTTP {} (it may be rate-limiting; set up another backend: SEARXNG_URL, BRAVE_SEARCH_API_KEY, TAVILY_API_KEY …)",
            status.as_u16()
        ));
    }
    let page = response
        .text()
        .await
        .map_err(|_| "DuckDuckGo search failed: unreadable answer".to_owned())?;
    Ok(parse(&page).into_iter().take(limit).collect())
}

/// The results on a DuckDuckGo HTML page (ads left out).
pub fn parse(page: &str) -> Vec<Hit> {
    let doc = dom::parse(page);
    let results = dom::find_all(&doc, &|n| {
        dom::has_class(n, "result") && !dom::has_class(n, "result--ad")
    });
    let mut hits = Vec::new();
    for result in results {
        let Some(link) = dom::find(&result, &|n| dom::has_class(n, "result__a")) else {
            continue;
        };
        let Some(href) = dom::attr(&link, "href") else {
            continue;
        };
        let url = target(&href);
        if url.is_empty() || hits.iter().any(|h: &Hit| h.url == url) {
            continue;
        }
        let snippet = dom::find(&result, &|n| dom::has_class(n, "result__snippet"))
            .map(|s| dom::text(&s))
            .unwrap_or_default();
        hits.push(Hit::new(dom::text(&link), url, snippet));
    }
    hits
}

/// The address behind DuckDuckGo's redirect link (`//duckduckgo.com/l/?uddg=…`).
fn target(href: &str) -> String {
    let Some(query) = href.split_once('?').map(|(_, q)| q) else {
        return absolute(href);
    };
    for pair in query.split('&') {
        if let Some(encoded) = pair.strip_prefix("uddg=") {
            return percent_decode(encoded);
        }
    }
    absolute(href)
}

fn absolute(href: &str) -> String {
    if let Some(rest) = href.strip_prefix("//") {
        format!("https://{rest}")
    } else if href.starts_with("http://") || href.starts_with("https://") {
        href.to_owned()
    } else {
        String::new()
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                    }
                    Err(_) => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn results_are_read_from_the_html_page() {
        let page = r##"<html><body>
          <div class="result results_links result--ad"><a class="result__a" href="https://ads.example/">Ad</a></div>
          <div class="result results_links">
            <h2><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.org%2Flearn&amp;rut=x">Learn <b>Rust</b></a></h2>
            <a class="result__snippet" href="#">A language empowering <b>everyone</b>.</a>
          </div>
          <div class="result"><a class="result__a" href="https://doc.rust-lang.org/book/">The Book</a></div>
        </body></html>"##;
        let hits = parse(page);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].title, "Learn Rust");
        assert_eq!(hits[0].url, "https://www.rust-lang.org/learn");
        assert_eq!(hits[0].description, "A language empowering everyone.");
        assert_eq!(hits[1].url, "https://doc.rust-lang.org/book/");
        assert_eq!(percent_decode("a%2Fb+c%zz"), "a/b c%zz");
    }
}
