use tokio::io::BufReader;

use super::{read_body, read_head};

async fn parse(raw: &[u8]) -> (super::Head, Vec<u8>) {
    let mut r = BufReader::new(raw);
    let head = read_head(&mut r).await.unwrap().unwrap();
    let body = read_body(&mut r, &head).await.unwrap();
    (head, body)
}

#[tokio::test]
async fn parses_content_length_request() {
    let raw = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}";
    let (head, body) = parse(raw).await;
    assert_eq!(head.method, "POST");
    assert_eq!(head.path, "/v1/chat/completions");
    assert_eq!(head.header("CONTENT-TYPE"), Some("application/json"));
    assert_eq!(head.headers[0], ("host".to_owned(), "x".to_owned()));
    assert_eq!(body, b"{\"a\":1}");
}

#[tokio::test]
async fn parses_chunked_request_and_bare_lf() {
    let raw = b"POST /p HTTP/1.1\nTransfer-Encoding: chunked\n\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n";
    let (head, body) = parse(raw).await;
    assert_eq!(head.path, "/p");
    assert_eq!(body, b"abcde");
}

#[tokio::test]
async fn empty_input_is_no_request() {
    let mut r = BufReader::new(&b""[..]);
    assert!(read_head(&mut r).await.unwrap().is_none());
}

#[tokio::test]
async fn rejects_garbage() {
    let mut r = BufReader::new(&b"NONSENSE\r\n\r\n"[..]);
    assert!(read_head(&mut r).await.is_err());
    let mut r = BufReader::new(&b"GET / HTTP/1.1\r\nno colon here\r\n\r\n"[..]);
    assert!(read_head(&mut r).await.is_err());
}
