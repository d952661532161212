//! A small web on loopback for the web tool tests: a SearXNG-compatible
//! JSON search endpoint of our own, HTML pages, a PDF, and redirects.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::json;

/// One response: status, content type, body (and a Location for redirects).
#[derive(Clone)]
pub struct Page {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub location: Option<String>,
}

impl Page {
    /// A 200 with `content_type`.
    pub fn ok(content_type: &'static str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            content_type,
            body: body.into(),
            location: None,
        }
    }

    /// A 302 to `to`.
    pub fn redirect(to: &str) -> Self {
        Self {
            status: 302,
            content_type: "text/plain",
            body: Vec::new(),
            location: Some(to.to_owned()),
        }
    }
}

/// The server; its thread ends with the test process.
pub struct LoopbackWeb {
    pub port: u16,
    pages: Arc<Mutex<HashMap<String, Page>>>,
    /// Paths requested, in order.
    pub hits: Arc<Mutex<Vec<String>>>,
}

fn serve(
    mut stream: TcpStream,
    pages: &Mutex<HashMap<String, Page>>,
    hits: &Mutex<Vec<String>>,
    port: u16,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
    }
    let target = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    hits.lock().unwrap().push(target.clone());
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let page = if path == "/search" {
        let q = query
            .split('&')
            .find_map(|p| p.strip_prefix("q="))
            .unwrap_or("")
            .replace('+', " ");
        let base = format!("http://127.0.0.1:{port}");
        let results = json!({"query": q, "results": [
            {"title": "Rain in the valley", "url": format!("{base}/rain.html"), "content": "Rainfall figures for the week.", "score": 0.5},
            {"title": "Quarterly report (PDF)", "url": format!("{base}/report.pdf"), "content": "The quarterly numbers.", "score": 2.0}
        ]});
        Page::ok("application/json", results.to_string())
    } else {
        pages.lock().unwrap().get(path).cloned().unwrap_or(Page {
            status: 404,
            content_type: "text/plain",
            body: b"not found".to_vec(),
            location: None,
        })
    };
    let mut head = format!(
        "HTTP/1.1 {} X\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        page.status,
        page.content_type,
        page.body.len()
    );
    if let Some(to) = &page.location {
        head.push_str(&format!("Location: {to}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&page.body);
}

impl LoopbackWeb {
    /// Starts serving.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let pages = Arc::new(Mutex::new(HashMap::new()));
        let hits = Arc::new(Mutex::new(Vec::new()));
        let (p, h) = (pages.clone(), hits.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (p, h) = (p.clone(), h.clone());
                std::thread::spawn(move || serve(stream, &p, &h, port));
            }
        });
        Self { port, pages, hits }
    }

    /// Serves `page` at `path`.
    pub fn put(&self, path: &str, page: Page) {
        self.pages.lock().unwrap().insert(path.to_owned(), page);
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// A one-page PDF whose text is `line` (Helvetica, a valid cross-reference table).
pub fn pdf(line: &str) -> Vec<u8> {
    let stream = format!("BT /F1 18 Tf 72 700 Td ({line}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
    ];
    let mut out = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.push_str(&format!("{} 0 obj\n{body}\nendobj\n", i + 1));
    }
    let xref = out.len();
    out.push_str(&format!(
        "xref\n0 {}\n0000000000 65535 f \n",
        objects.len() + 1
    ));
    for offset in offsets {
        out.push_str(&format!("{offset:010} 00000 n \n"));
    }
    out.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    out.into_bytes()
}
