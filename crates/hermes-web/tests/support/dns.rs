//! A DNS server on loopback with a script of answers, a resolver that asks
//! it, and an HTTP server on 127.0.0.1 that logs what it is asked for: the
//! pieces of the DNS-rebinding tests.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_tools::url_safety::Resolver;

pub const PUBLIC: Ipv4Addr = Ipv4Addr::new(93, 184, 216, 34);
pub const LOOPBACK: Ipv4Addr = Ipv4Addr::LOCALHOST;
pub const METADATA: Ipv4Addr = Ipv4Addr::new(169, 254, 169, 254);

/// A UDP DNS server answering A queries: the nth query for a name gets the
/// nth address of its script (the last one from then on).
pub struct DnsServer {
    pub addr: std::net::SocketAddr,
    pub queries: Arc<AtomicUsize>,
}

impl DnsServer {
    pub fn start(script: &[(&str, &[Ipv4Addr])]) -> Self {
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
pub struct UdpResolver(pub std::net::SocketAddr);

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
pub fn http_server(redirect: Option<String>) -> (u16, Arc<Mutex<Vec<String>>>) {
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
