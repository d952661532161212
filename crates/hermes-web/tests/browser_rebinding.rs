//! DNS rebinding against the browser: Chromium resolves names itself, so it
//! runs behind Hermes' checking proxy. A name that answers our check with a
//! public address and the next lookup with 127.0.0.1 must not reach the
//! loopback server; a page the policy allows still loads through the proxy.
//! Needs a Chromium on PATH (skipped, with a message, without one).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hermes_tools::url_safety::UrlPolicy;
use hermes_web::browser::{BrowserSettings, BrowserSlot};
use support::dns::{DnsServer, LOOPBACK, METADATA, PUBLIC, UdpResolver, http_server};

fn slot(dns: &DnsServer, policy: UrlPolicy, cache: &std::path::Path) -> Option<Arc<BrowserSlot>> {
    let Some(exe) =
        hermes_web::browser::cdp::find_chromium(None, std::env::var("PATH").ok().as_deref())
    else {
        eprintln!("skipped: no Chromium on PATH (Debian: apt install chromium)");
        return None;
    };
    let settings = BrowserSettings {
        executable: exe,
        headed: false,
        inactivity: Duration::from_secs(600),
        cache_dir: cache.to_path_buf(),
        policy,
    };
    Some(BrowserSlot::with_resolver(
        settings,
        Arc::new(UdpResolver(dns.addr)),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_name_rebinds_to_loopback_is_refused_by_the_proxy() {
    let dns = DnsServer::start(&[
        ("rebind.test", &[PUBLIC, LOOPBACK]),
        ("tls.test", &[PUBLIC, LOOPBACK]),
    ]);
    let (port, log) = http_server(None);
    let dir = tempfile::tempdir().unwrap();
    let Some(slot) = slot(&dns, UrlPolicy::default(), dir.path()) else {
        return;
    };
    let nav = slot
        .navigate(&format!("http://rebind.test:{port}/secret"))
        .await;
    assert_eq!(nav["success"], false, "{nav}");
    let error = nav["error"].as_str().unwrap();
    assert!(
        error.starts_with("Blocked:")
            && error.contains("rebind.test resolves to the private/internal address 127.0.0.1"),
        "{error}"
    );
    // Over TLS the browser asks for a tunnel, refused the same way.
    let nav = slot.navigate(&format!("https://tls.test:{port}/")).await;
    assert_eq!(nav["success"], false, "{nav}");
    let error = nav["error"].as_str().unwrap();
    assert!(
        error.starts_with("Blocked:")
            && error.contains("tls.test resolves to the private/internal address 127.0.0.1"),
        "{error}"
    );
    assert!(
        dns.queries.load(Ordering::SeqCst) >= 4,
        "the check before navigating and the proxy each asked"
    );
    assert!(
        log.lock().unwrap().is_empty(),
        "the loopback server was reached: {:?}",
        log.lock().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_page_loads_through_the_proxy_and_a_redirect_to_metadata_does_not() {
    // These names exist only in the test's DNS server: a page that loads
    // proves the browser reached it through the proxy's resolver.
    let dns = DnsServer::start(&[
        ("intranet.test", &[LOOPBACK]),
        ("start.test", &[LOOPBACK]),
        ("hop.test", &[METADATA]),
    ]);
    let (port, log) = http_server(None);
    let (hop_port, hop_log) = http_server(Some("http://hop.test:{port}/credentials".to_owned()));
    let dir = tempfile::tempdir().unwrap();
    let allow = UrlPolicy {
        allow_private: true,
    };
    let Some(slot) = slot(&dns, allow, dir.path()) else {
        return;
    };
    let url = format!("http://intranet.test:{port}/page");
    let nav = slot.navigate(&url).await;
    assert_eq!(nav["success"], true, "{nav}");
    assert_eq!(nav["url"], url.as_str());
    let text = slot.console(false, Some("document.body.innerText")).await;
    assert_eq!(text["result"], "internal page", "{text}");
    assert!(log.lock().unwrap().iter().any(|p| p == "/page"));

    // The first hop is allowed (loopback, private URLs on); the redirect
    // goes to a name that answers the metadata address, refused whatever
    // the policy says.
    let nav = slot
        .navigate(&format!("http://start.test:{hop_port}/"))
        .await;
    assert_eq!(nav["success"], false, "{nav}");
    let error = nav["error"].as_str().unwrap();
    assert!(
        error.starts_with("Blocked:") && error.contains("metadata"),
        "{error}"
    );
    assert_eq!(
        *hop_log.lock().unwrap(),
        ["/"],
        "only the first hop may be requested"
    );
}
