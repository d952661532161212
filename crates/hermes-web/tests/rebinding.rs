//! DNS rebinding against the page fetcher: a DNS server on loopback answers
//! the check with one address and the connection with another. The fetch
//! must connect only to what was checked, so an HTTP server on 127.0.0.1
//! never sees the request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use hermes_tools::url_safety::UrlPolicy;
use hermes_web::extract::fetch::{Fetcher, fetch_raw};
use support::dns::{DnsServer, LOOPBACK, METADATA, PUBLIC, UdpResolver, http_server};

fn fetcher(dns: &DnsServer) -> Fetcher {
    Fetcher::with_resolver(Arc::new(UdpResolver(dns.addr)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_that_rebinds_to_loopback_after_the_check_is_refused() {
    let dns = DnsServer::start(&[("rebind.test", &[PUBLIC, LOOPBACK])]);
    let (port, log) = http_server(None);
    let url = format!("http://rebind.test:{port}/secret");
    let err = fetch_raw(&fetcher(&dns), &url, UrlPolicy::default(), "*/*")
        .await
        .unwrap_err();
    assert!(
        err.starts_with("Blocked") && err.contains("127.0.0.1"),
        "{err}"
    );
    assert_eq!(
        dns.queries.load(Ordering::SeqCst),
        2,
        "the check and the connection each asked once"
    );
    assert!(
        log.lock().unwrap().is_empty(),
        "the internal server was reached"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_goes_to_the_address_the_resolver_gave() {
    // The name exists only in the test's DNS server: reaching the page proves
    // the client connected through the injected, checked resolver.
    let dns = DnsServer::start(&[("intranet.test", &[LOOPBACK])]);
    let (port, log) = http_server(None);
    let url = format!("http://intranet.test:{port}/page");
    let allow = UrlPolicy {
        allow_private: true,
    };
    let (final_url, _, body) = fetch_raw(&fetcher(&dns), &url, allow, "*/*").await.unwrap();
    assert_eq!(final_url, url);
    assert_eq!(body, b"internal page");
    assert_eq!(*log.lock().unwrap(), ["/page"]);
    let refused = fetch_raw(&fetcher(&dns), &url, UrlPolicy::default(), "*/*")
        .await
        .unwrap_err();
    assert!(refused.starts_with("Blocked"), "{refused}");
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_hop_that_rebinds_to_metadata_is_refused_even_with_private_urls_allowed() {
    let dns = DnsServer::start(&[
        ("start.test", &[LOOPBACK]),
        ("hop.test", &[LOOPBACK, METADATA]),
    ]);
    let (port, log) = http_server(Some("http://hop.test:{port}/credentials".to_owned()));
    let allow = UrlPolicy {
        allow_private: true,
    };
    let url = format!("http://start.test:{port}/");
    let err = fetch_raw(&fetcher(&dns), &url, allow, "*/*")
        .await
        .unwrap_err();
    assert!(
        err.starts_with("Blocked") && err.contains("metadata"),
        "{err}"
    );
    assert_eq!(
        *log.lock().unwrap(),
        ["/"],
        "only the first hop may be requested"
    );
}
