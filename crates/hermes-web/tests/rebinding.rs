//! DNS rebinding against the page fetcher: a DNS server on loopback answers
//! the check with one address and the connection with another. The fetch
//! must connect only to what was checked, so an HTTP server on 127.0.0.1
//! never sees the request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_tools::url_safety::{Resolver, UrlPolicy};
use hermes_web::extract::fetch::{Fetcher, fetch_raw};

const PUBLIC: Ipv4Addr = Ipv4Addr::new(93, 184, 216, 34);
const LOOPBACK: Ipv4Addr = Ipv4Addr::LOCALHOST;
const METADATA: Ipv4Addr = Ipv4Addr::new(169, 254, 169, 254);

/// A UDP DNS server answering A queries: the nth query for a name gets the
/// nth address of its script (the last one from then on).
struct DnsServer {
    addr: std::net::SocketAddr,
    queries: Arc<AtomicUsize>,
}

impl DnsServer {
    fn start(script: &[(&str, &[Ipv4Addr])]) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = socket.local_addr().unwrap();
        let script: HashMap<String, Vec<Ipv4Addr>> = script
            .iter()
            .map(|(name, ips)| ((*name).to_owned(), ips.to_vec()))
            .collect();
        let queries = Arc::new(AtomicUsize::new(0));
        let count = queries.clone();
        std::thread::spawn(move || {
            let mut seen: HashMap<String, usize> = HashMap::new();
            let mut buf = [0u8; 512];
            while let Ok((n, peer)) = socket.recv_from(&mut buf) {
                count.fetch_add(1, Ordering::SeqCst);
                let query = &buf[..n];
                let (name, question_end) = read_name(query, 12);
                let nth = seen.entry(name.clone()).or_default();
                let answer = script.get(&name).map(|ips| ips[(*nth).min(ips.len() - 1)]);
                *nth += 1;
                let reply = answer_for(query, question_end + 4, answer);
                socket.send_to(&reply, peer).unwrap();
            }
        });
        Self { addr, queries }
    }
}

/// The dotted name at `at` and where it ends (labels only: queries carry no pointers).
fn read_name(msg: &[u8], mut at: usize) -> (String, usize) {
    let mut labels = Vec::new();
    while msg[at] != 0 {
        let len = msg[at] as usize;
        labels.push(String::from_utf8_lossy(&msg[at + 1..at + 1 + len]).to_ascii_lowercase());
        at += 1 + len;
    }
    (labels.join("."), at + 1)
}

/// A reply to `query` (header and question up to `question_end`): one A
/// record, or NXDOMAIN.
fn answer_for(query: &[u8], question_end: usize, answer: Option<Ipv4Addr>) -> Vec<u8> {
    let mut reply = query[..question_end].to_vec();
    reply[2] = 0x81;
    reply[3] = if answer.is_some() { 0x80 } else { 0x83 };
    reply[6..8].copy_from_slice(&u16::from(answer.is_some()).to_be_bytes());
    reply[8..12].fill(0);
    if let Some(ip) = answer {
        reply.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4]);
        reply.extend_from_slice(&ip.octets());
    }
    reply
}

/// A resolver asking the test DNS server (what the system resolver does
/// with its configured server).
struct UdpResolver(std::net::SocketAddr);

impl Resolver for UdpResolver {
    fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        socket.set_read_timeout(Some(Duration::from_secs(5)))?;
        let mut query = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for label in host.split('.') {
            query.push(label.len() as u8);
            query.extend_from_slice(label.as_bytes());
        }
        query.extend_from_slice(&[0, 0, 1, 0, 1]);
        socket.send_to(&query, self.0)?;
        let mut buf = [0u8; 512];
        let n = socket.recv(&mut buf)?;
        let reply = &buf[..n];
        let answers = u16::from_be_bytes([reply[6], reply[7]]);
        // Answers follow the echoed question, each a pointer name then fixed fields.
        let mut at = query.len();
        let mut found = Vec::new();
        for _ in 0..answers {
            let rdlen = u16::from_be_bytes([reply[at + 10], reply[at + 11]]) as usize;
            let data = &reply[at + 12..at + 12 + rdlen];
            if rdlen == 4 {
                found.push(IpAddr::from([data[0], data[1], data[2], data[3]]));
            }
            at += 12 + rdlen;
        }
        Ok(found)
    }
}

/// An HTTP server on 127.0.0.1 that logs the paths it is asked for; `/`
/// redirects to `redirect` (`{port}` filled in) when given, everything else
/// is a page.
fn http_server(redirect: Option<String>) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
            seen.lock().unwrap().push(path.clone());
            let reply = match (&redirect, path.as_str()) {
                (Some(to), "/") => format!(
                    "HTTP/1.1 302 Found\r\nLocation: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    to.replace("{port}", &port.to_string())
                ),
                _ => "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\ninternal page".to_owned(),
            };
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (port, log)
}

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
