//! Load benchmark of the API server (`hermes gateway run`, release build).
//!
//! `cargo bench -p hermes-cli --bench api_server_load [-- CLIENTS SECONDS]`
//! (default 200 clients for 10 s) prints:
//! - how long after exec `/health` first answers, and the gateway's RSS then
//!   (a server started again on its home; the first start, which makes
//!   state.db and the bundled skills, is shown beside it);
//! - CLIENTS concurrent clients, each sending streamed chat completions back to
//!   back (a new conversation each time, so every request is a full agent run
//!   with its state.db session) against the mock provider: requests/s,
//!   latency p50/p99, errors, and the gateway's peak RSS.
//!
//! `HERMES_BENCH_GATEWAY=PATH` runs `PATH gateway run` instead of this build's
//! binary: the reference's `hermes` (its API server needs `aiohttp`), or a
//! wrapper script that starts ours under a profiler.
//!
//! `HERMES_BENCH_DATABASE_URL=postgresql://…` puts the sessions in that
//! database (a schema of its own, dropped at the end) instead of state.db,
//! and `HERMES_BENCH_REPLICAS=N` starts N gateways on it, the clients taking
//! them in turn (what a load balancer in front of replicas does).
//!
//! Goals (issue 17): ≥ 500 requests/s sustained, p99 ≤ 1 s, ≤ 100 MiB peak RSS,
//! no errors; `/health` ready ≤ 20 ms after exec at ≤ 15 MiB.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/measure.rs"]
mod measure;
use measure::{kib, percentile};

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hermes_mock::{MockServer, Reply};

const BIN: &str = env!("CARGO_BIN_EXE_hermes");
const KEY: &str = "bench-key-0123456789abcdef";

/// One streamed chat over a fresh connection, as a task.
async fn request_async(port: u16, body: &str) -> Result<String, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(head.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut raw))
        .await
        .map_err(|_| "timed out".to_owned())?
        .map_err(|e| e.to_string())?;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    if !raw.starts_with("HTTP/1.1 200") {
        return Err(raw.lines().next().unwrap_or("no answer").to_owned());
    }
    Ok(raw)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let clients: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(200);
    let seconds: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10);

    let mock = MockServer::start();
    mock.forget_bodies();
    mock.respond_with(|_| Some(Reply::text("A short streamed answer from the mock model.")));
    let replicas: usize = std::env::var("HERMES_BENCH_REPLICAS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let database = std::env::var("HERMES_BENCH_DATABASE_URL").ok();
    let scratch = database
        .as_deref()
        .map(|url| hermes_postgres::testing::Scratch::new(url).unwrap());
    let store_config = scratch.as_ref().map_or(String::new(), |s| {
        format!(
            "sessiondb:\n  provider: postgresql\n  schema: {}\n",
            s.schema
        )
    });
    println!(
        "api  store: {}, {replicas} replica(s)",
        scratch.as_ref().map_or("state.db".to_owned(), |s| format!(
            "PostgreSQL (schema {})",
            s.schema
        ))
    );
    let gateways: Vec<Gateway> = (0..replicas)
        .map(|_| start_gateway(&mock.base_url(), &store_config, database.as_deref()))
        .collect();
    let ports: Vec<u16> = gateways.iter().map(|g| g.port).collect();
    let load = run_load(&ports, clients, seconds);
    let peak: Vec<u64> = gateways
        .iter()
        .map(|g| kib(g.child.id(), "VmHWM:"))
        .collect();
    println!(
        "api  {clients} concurrent streamed chats for {:.1?}: {} ok, {:.0} requests/s, p50 {:.2?}, p99 {:.2?}, errors {}",
        load.wall,
        load.latencies.len(),
        load.latencies.len() as f64 / load.wall.as_secs_f64(),
        percentile(&load.latencies, 0.5),
        percentile(&load.latencies, 0.99),
        load.errors
    );
    println!("api  gateway peak RSS {peak:?} KiB");
    if let Some(e) = &load.first_error {
        println!("api  first error: {e}");
    }
    for mut g in gateways {
        let _ = Command::new("kill").arg(g.child.id().to_string()).status();
        let _ = g.child.wait();
    }
    drop(scratch);
}

/// One running gateway: its home (kept until the end), API port and process.
struct Gateway {
    _home: tempfile::TempDir,
    port: u16,
    child: std::process::Child,
}

/// A gateway on a new home, started twice: a first start makes state.db and the
/// bundled skills; the figure printed is the next one, a server started again on
/// its home.
fn start_gateway(mock_url: &str, store_config: &str, database: Option<&str>) -> Gateway {
    let home = tempfile::tempdir().unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "model:\n  provider: custom\n  base_url: {mock_url}\n  default: mock-model\nagent:\n  api_max_retries: 1\n\
             platforms:\n  api_server:\n    enabled: true\n    extra:\n      port: {port}\n\
             gateway:\n  api_server:\n    max_concurrent_runs: 0\n{store_config}"
        ),
    )
    .unwrap();
    let started = Instant::now();
    let mut first = spawn_gateway(home.path(), database);
    let first_ready = wait_ready(port, started);
    let _ = Command::new("kill").arg(first.id().to_string()).status();
    let _ = first.wait();
    let started = Instant::now();
    let child = spawn_gateway(home.path(), database);
    let ready = wait_ready(port, started);
    println!(
        "api  /health ready after exec      {ready:>10.2?}  RSS {} KiB  (first start in a new home {first_ready:.2?})",
        kib(child.id(), "VmRSS:")
    );
    Gateway {
        _home: home,
        port,
        child,
    }
}

/// What the clients saw.
struct Load {
    /// Sorted latencies of the complete answers.
    latencies: Vec<Duration>,
    errors: usize,
    first_error: Option<String>,
    wall: Duration,
}

/// `clients` concurrent clients sending streamed chats back to back for
/// `seconds`, taking the ports in turn. The clients are tasks on one thread (not
/// 200 OS threads), so the load generator competes as little as possible with
/// the gateway for the cores.
fn run_load(ports: &[u16], clients: usize, seconds: u64) -> Load {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(AtomicUsize::new(0));
    let first_error = Arc::new(std::sync::Mutex::new(None::<String>));
    let started = Instant::now();
    let mut latencies: Vec<Duration> = runtime.block_on(async {
        let tasks: Vec<_> = (0..clients)
            .map(|c| {
                let (stop, errors, first_error) = (stop.clone(), errors.clone(), first_error.clone());
                let ports = ports.to_vec();
                tokio::spawn(async move {
                    let mut latencies = Vec::new();
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        n += 1;
                        let body = format!(
                            "{{\"stream\": true, \"messages\": [{{\"role\": \"user\", \"content\": \"client {c} request {n}\"}}]}}"
                        );
                        let t = Instant::now();
                        let port = ports[(c + n as usize) % ports.len()];
                        match request_async(port, &body).await {
                            Ok(raw) if raw.contains("data: [DONE]") => latencies.push(t.elapsed()),
                            Ok(raw) => {
                                errors.fetch_add(1, Ordering::Relaxed);
                                first_error.lock().unwrap().get_or_insert(raw.chars().take(300).collect());
                            }
                            Err(e) => {
                                errors.fetch_add(1, Ordering::Relaxed);
                                first_error.lock().unwrap().get_or_insert(e);
                            }
                        }
                    }
                    latencies
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_secs(seconds)).await;
        stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        all
    });
    let wall = started.elapsed();
    latencies.sort();
    let first_error = first_error.lock().unwrap().take();
    Load {
        latencies,
        errors: errors.load(Ordering::Relaxed),
        first_error,
        wall,
    }
}

/// `hermes gateway run` (or `HERMES_BENCH_GATEWAY`) on `home`.
fn spawn_gateway(home: &std::path::Path, database: Option<&str>) -> std::process::Child {
    let other = std::env::var_os("HERMES_BENCH_GATEWAY");
    let mut cmd = Command::new(other.as_deref().unwrap_or(BIN.as_ref()));
    cmd.args(["gateway", "run"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HERMES_HOME", home)
        .env("API_SERVER_KEY", KEY)
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(url) = database {
        cmd.env("HERMES_DATABASE_URL", url);
    }
    cmd.spawn().unwrap()
}

/// Waits for `/health` on `port`; how long after `started` it answered.
fn wait_ready(port: u16, started: Instant) -> Duration {
    loop {
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = write!(
                s,
                "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            );
            let mut answer = String::new();
            if s.read_to_string(&mut answer).is_ok() && answer.starts_with("HTTP/1.1 200") {
                return started.elapsed();
            }
        }
        std::thread::sleep(Duration::from_micros(250));
        assert!(started.elapsed() < Duration::from_secs(20), "no /health");
    }
}
