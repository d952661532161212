//! The stdio lines between the client and rmcp. rmcp drops a line that is
//! not JSON without a word (rust-sdk#938), so a client that sent one waits
//! forever; JSON-RPC 2.0 asks for a parse error (-32700, id null). Lines are
//! checked here first: JSON goes on to rmcp, anything else is answered.
//! Replies from rmcp and parse errors share stdout a whole line at a time.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The reply to a line that is not JSON.
pub const PARSE_ERROR: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;

/// Room for one message in each pipe; larger ones just take turns.
const PIPE: usize = 64 * 1024;

/// The ends rmcp reads and writes, and the task writing `output` (it ends
/// once rmcp has dropped its writer and everything is flushed).
pub struct Framed {
    /// What rmcp reads: the client's JSON lines.
    pub read: DuplexStream,
    /// What rmcp writes: its messages, one per line.
    pub write: DuplexStream,
    /// Finishes after the last line reached `output`.
    pub done: JoinHandle<()>,
}

/// Puts the parse-error check between `input`/`output` and rmcp.
pub fn frame<R, W>(input: R, output: W) -> Framed
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_read, mut to_rmcp) = tokio::io::duplex(PIPE);
    let (rmcp_write, from_rmcp) = tokio::io::duplex(PIPE);
    let (errors_tx, errors_rx) = mpsc::unbounded_channel::<()>();
    tokio::spawn(async move {
        let mut lines = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if is_json_or_blank(&line) {
                if to_rmcp.write_all(&line).await.is_err() {
                    break;
                }
            } else if errors_tx.send(()).is_err() {
                break;
            }
        }
        // Dropping `to_rmcp` tells rmcp the client has gone.
    });
    let done = tokio::spawn(write_out(from_rmcp, errors_rx, output));
    Framed {
        read: rmcp_read,
        write: rmcp_write,
        done,
    }
}

/// Whether `line` is a JSON value (or nothing), as rmcp will read it.
fn is_json_or_blank(line: &[u8]) -> bool {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.trim_ascii();
    line.is_empty() || serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok()
}

/// Copies rmcp's lines and the parse errors to `output`, a line at a time.
async fn write_out<W>(
    from_rmcp: DuplexStream,
    mut errors: mpsc::UnboundedReceiver<()>,
    mut output: W,
) where
    W: AsyncWrite + Unpin,
{
    let mut replies = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut errors_open = true;
    loop {
        line.clear();
        tokio::select! {
            read = replies.read_until(b'\n', &mut line) => {
                if !matches!(read, Ok(n) if n > 0) {
                    break;
                }
            }
            error = errors.recv(), if errors_open => {
                match error {
                    Some(()) => line.extend_from_slice(PARSE_ERROR.as_bytes()),
                    None => {
                        errors_open = false;
                        continue;
                    }
                }
                line.push(b'\n');
            }
        }
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
    // Errors for lines read before the client left, if rmcp finished first.
    while errors.try_recv().is_ok() {
        let _ = output.write_all(PARSE_ERROR.as_bytes()).await;
        let _ = output.write_all(b"\n").await;
    }
    let _ = output.flush().await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn what_counts_as_json() {
        assert!(is_json_or_blank(b"{\"jsonrpc\":\"2.0\"}\r\n"));
        assert!(is_json_or_blank(b"\xEF\xBB\xBF[1]\n"));
        assert!(is_json_or_blank(b"\n"));
        assert!(!is_json_or_blank(b"{not json\n"));
        assert!(!is_json_or_blank(b"{\"a\":1}{\n"));
        assert!(!is_json_or_blank(b"\xff\xfe\n"));
    }

    #[tokio::test]
    async fn a_bad_line_is_answered_and_good_ones_pass_through() {
        let (client_in, server_in) = tokio::io::duplex(1024);
        let (server_out, mut client_out) = tokio::io::duplex(1024);
        let framed = frame(server_in, server_out);
        let mut client_in = client_in;
        client_in.write_all(b"garbage\n{\"id\":1}\n").await.unwrap();
        drop(client_in);
        let mut seen = String::new();
        BufReader::new(framed.read)
            .read_to_string(&mut seen)
            .await
            .unwrap();
        assert_eq!(seen, "{\"id\":1}\n");
        drop(framed.write);
        framed.done.await.unwrap();
        let mut out = String::new();
        client_out.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, format!("{PARSE_ERROR}\n"));
    }
}
