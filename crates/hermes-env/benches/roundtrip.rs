//! One `echo` round trip per backend, as the terminal tool runs it (`bash
//! -c`, through the environment's launcher): local, sandbox (bubblewrap)
//! and ssh with its control master up (a real `sshd` started on loopback),
//! docker when `HERMES_BENCH_DOCKER_IMAGE` names an image the engine has
//! (`HERMES_BENCH_DOCKER_CLI` the engine's command line, default: the one
//! that answers), p50 over 50 runs; next to the reference 0.19.0's local and
//! ssh backends when `HERMES_REF_PYTHON` names a Python that imports
//! hermes-agent.
//!
//! `cargo bench -p hermes-env --bench roundtrip`

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hermes_env::{
    Docker, DockerSettings, Ended, Environment, Job, Local, Sandbox, SandboxOptions, Ssh,
    SshSettings,
};

const RUNS: usize = 50;

fn p50(rt: &tokio::runtime::Runtime, env: &dyn Environment, cwd: &Path) -> Duration {
    // As the terminal tool runs a foreground command: merged output, quiet variables.
    let pool = env.launchers().expect("every backend has launchers");
    let once = || {
        let mut out = Vec::new();
        let job = Job {
            argv: &["bash", "-c", "echo hi"],
            cwd,
            merge_stderr: true,
            vars: &[("PAGER", "cat"), ("GIT_PAGER", "cat"), ("TERM", "dumb")],
            unset: &[],
        };
        let ended = rt
            .block_on(pool.run(env, job, &mut |b| out.extend_from_slice(b), &mut |_| {}))
            .unwrap();
        assert_eq!(ended, Some(Ended::Exited(0)));
        out
    };
    assert_eq!(once(), b"hi\n");
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            once();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}
fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// sshd on a free loopback port with a generated key pair: (child, port, key).
fn sshd(dir: &Path) -> Option<(std::process::Child, u16, String)> {
    if !Path::new("/usr/sbin/sshd").exists() {
        return None;
    }
    for key in ["host_key", "client_key"] {
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(dir.join(key))
            .status()
            .ok()?;
    }
    std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).ok()?;
    let _ = std::fs::create_dir_all("/run/sshd");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    std::fs::write(
        dir.join("sshd_config"),
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n\
             PasswordAuthentication no\nPermitRootLogin yes\n",
            d = dir.display()
        ),
    )
    .ok()?;
    let child = Command::new("/usr/sbin/sshd")
        .args(["-D", "-e", "-f"])
        .arg(dir.join("sshd_config"))
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some((child, port, dir.join("client_key").display().to_string()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd = work.path();
    let local = p50(&rt, &Local::default(), cwd);
    println!("local   p50 {}", ms(local));
    // What each command cost before launchers: a new bash per command.
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            let out = rt
                .block_on(async {
                    tokio::process::Command::new("bash")
                        .args(["-c", "echo hi"])
                        .current_dir(cwd)
                        .output()
                        .await
                })
                .unwrap();
            assert_eq!(out.stdout, b"hi\n");
            start.elapsed()
        })
        .collect();
    times.sort();
    println!("        (a new bash per command: {})", ms(times[RUNS / 2]));
    match Sandbox::new(SandboxOptions {
        network: false,
        workspace: cwd.to_path_buf(),
        scratch: work.path().join("scratch"),
        hidden: Vec::new(),
    }) {
        Ok(sandbox) => {
            let t = p50(&rt, &sandbox, cwd);
            println!(
                "sandbox p50 {} ({:.1}x local)",
                ms(t),
                t.as_secs_f64() / local.as_secs_f64()
            );
        }
        Err(e) => println!("sandbox SKIPPED: {e}"),
    }
    let keys = tempfile::tempdir().unwrap();
    let server = sshd(keys.path());
    let user = String::from_utf8(Command::new("whoami").output().unwrap().stdout).unwrap();
    let user = user.trim().to_owned();
    if let Some((_, port, key)) = &server {
        let ssh = Ssh::new(SshSettings {
            host: "127.0.0.1".into(),
            user: user.clone(),
            port: *port,
            key: Some(key.clone()),
            cwd: None,
            connect_timeout: 10,
        })
        .unwrap();
        println!(
            "ssh     p50 {} (control master up)",
            ms(p50(&rt, &ssh, cwd))
        );
    } else {
        println!("ssh     SKIPPED: no sshd (apt install openssh-server)");
    }
    match std::env::var("HERMES_BENCH_DOCKER_IMAGE") {
        Ok(image) => {
            let home = tempfile::tempdir().unwrap();
            let settings = DockerSettings {
                image,
                volumes: Vec::new(),
                forward_env: Vec::new(),
                env: Vec::new(),
                cpu: 0.0,
                memory_mb: 0,
                persistent: false,
                network: false,
                cli: std::env::var("HERMES_BENCH_DOCKER_CLI").ok(),
            };
            match Docker::new(settings, home.path(), "bench") {
                Ok(docker) => {
                    println!(
                        "docker  p50 {} (launcher up in the container)",
                        ms(p50(&rt, &docker, Path::new("/workspace")))
                    );
                    docker.remove();
                }
                Err(e) => println!("docker  SKIPPED: {e}"),
            }
        }
        Err(_) => {
            println!("docker  SKIPPED: set HERMES_BENCH_DOCKER_IMAGE to an image the engine has")
        }
    }
    if let Ok(python) = std::env::var("HERMES_REF_PYTHON") {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/reference_roundtrip.py");
        let mut cmd = Command::new(python);
        cmd.arg(script).current_dir(cwd);
        if let Some((_, port, key)) = &server {
            cmd.args(["127.0.0.1", &port.to_string(), &user, key]);
        }
        let out = cmd.output().unwrap();
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            println!("reference: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
    } else {
        println!(
            "reference SKIPPED: set HERMES_REF_PYTHON to a Python with hermes-agent==0.19.0 and its dependencies"
        );
    }
    if let Some((mut child, _, _)) = server {
        let _ = child.kill();
    }
}
