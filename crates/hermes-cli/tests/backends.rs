//! Where commands run (`terminal.backend`), through the binary with a
//! scripted model: the model writes a file, patches it, searches it, reads
//! it back, runs a command and a background process, all inside the
//! configured environment. The sandbox keeps writes in the workspace, hides
//! secrets and cuts the network; SSH runs against a real `sshd` started on
//! loopback; an unknown backend is an error, never a local run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::*;

/// Scripts `batches` of tool calls (then a closing answer), runs one
/// non-interactive turn with `--yolo`, and returns each batch's results.
fn run_batches(sb: &Sandbox, batches: &[Vec<(&str, Value)>]) -> Vec<Vec<String>> {
    let mut ids = 0;
    for batch in batches {
        let calls: Vec<(String, &str, String)> = batch
            .iter()
            .map(|(tool, args)| {
                ids += 1;
                (format!("c{ids}"), *tool, args.to_string())
            })
            .collect();
        let refs: Vec<(&str, &str, &str)> = calls
            .iter()
            .map(|(i, t, a)| (i.as_str(), *t, a.as_str()))
            .collect();
        sb.mock.push(Reply::tool_calls(&refs));
    }
    sb.mock.push(Reply::text("done"));
    let out = sb.chat("work in the environment", &["--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = sb.requests();
    let tools = messages_with_role(requests.last().unwrap(), "tool");
    let mut at = 0;
    batches
        .iter()
        .map(|b| {
            let part: Vec<String> = tools[at..at + b.len()]
                .iter()
                .map(|m| m["content"].as_str().unwrap().to_owned())
                .collect();
            at += b.len();
            part
        })
        .collect()
}

/// The model's round trip through the file tools and the terminal on
/// `file`: a write and a patch, then (a batch later, as read-only tools may
/// run alongside a patch) a search, a read, a command and a background one.
fn file_round_trip(file: &str) -> [Vec<(&'static str, Value)>; 2] {
    [
        vec![
            (
                "write_file",
                json!({"path": file, "content": "alpha\nbeta\n"}),
            ),
            (
                "patch",
                json!({"path": file, "old_string": "beta", "new_string": "gamma"}),
            ),
        ],
        vec![
            ("search_files", json!({"pattern": "gam+a", "path": "."})),
            ("read_file", json!({"path": file})),
            (
                "terminal",
                json!({"command": format!("wc -l < {file} && cat {file}")}),
            ),
            (
                "terminal",
                json!({"command": "sleep 0.3; echo from-the-background > bg.txt", "background": true}),
            ),
        ],
    ]
}

fn sandbox_works() -> Option<&'static str> {
    let ok = Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--unshare-net", "true"])
        .status()
        .is_ok_and(|s| s.success());
    (!ok).then_some("bwrap is missing or cannot create namespaces here")
}

#[test]
fn the_sandbox_keeps_writes_in_the_workspace_and_hides_secrets() {
    if let Some(why) = sandbox_works() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config("terminal:\n  backend: sandbox\n");
    std::fs::write(
        sb.home.path().join(".env"),
        "MY_SERVICE_TOKEN=zq8-very-private-value\n",
    )
    .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let scratch = format!("/tmp/hermes-sandbox-probe-{}.txt", std::process::id());
    let env_file = sb.home.path().join(".env").display().to_string();
    let second = vec![
        ("terminal", json!({"command": "sleep 1; cat bg.txt"})),
        (
            "terminal",
            json!({"command": "touch /opt/hermes-outside.txt"}),
        ),
        (
            "write_file",
            json!({"path": "/opt/hermes-outside2.txt", "content": "x"}),
        ),
        ("terminal", json!({"command": format!("cat {env_file}")})),
        (
            "terminal",
            json!({"command": format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")}),
        ),
        (
            "terminal",
            json!({"command": "touch widened.txt", "workdir": "/opt"}),
        ),
        (
            "write_file",
            json!({"path": scratch, "content": "private tmp"}),
        ),
        ("terminal", json!({"command": format!("cat {scratch}")})),
    ];
    let [edit, look] = file_round_trip("notes.txt");
    let results = run_batches(&sb, &[edit, look, second]);
    let (edit, look, second) = (&results[0], &results[1], &results[2]);
    assert!(edit[0].contains("bytes_written"), "{}", edit[0]);
    assert!(edit[1].contains("\"success\":true"), "{}", edit[1]);
    assert!(look[0].contains("gamma"), "{}", look[0]);
    assert!(look[1].contains("gamma"), "{}", look[1]);
    assert!(look[2].contains("gamma"), "{}", look[2]);
    assert_eq!(
        std::fs::read_to_string(sb.work_path("notes.txt")).unwrap(),
        "alpha\ngamma\n",
        "the workspace is the host's directory, writable from the box"
    );
    assert!(second[0].contains("from-the-background"), "{}", second[0]);
    assert!(second[1].contains("Read-only file system"), "{}", second[1]);
    assert!(!Path::new("/opt/hermes-outside.txt").exists());
    assert!(
        !Path::new("/opt/hermes-outside2.txt").exists(),
        "{}",
        second[2]
    );
    assert!(
        !second[3].contains("zq8-very-private-value"),
        "{}",
        second[3]
    );
    assert!(!second[4].contains("connected"), "{}", second[4]);
    assert!(
        listener.accept().is_err(),
        "the box reached a loopback server"
    );
    assert!(second[5].contains("Read-only file system"), "{}", second[5]);
    assert!(!Path::new("/opt/widened.txt").exists(), "a workdir widened the box");
    assert!(second[7].contains("private tmp"), "{}", second[7]);
    assert!(
        !Path::new(&scratch).exists(),
        "the box's /tmp is its own, not the host's"
    );
    let prompt = sb.requests()[0].to_string();
    assert!(
        prompt.contains("bubblewrap box"),
        "the model is told where it runs"
    );
}

#[test]
fn an_unavailable_backend_is_an_error_not_a_local_run() {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config("terminal:\n  backend: modal\n");
    let marker = sb.work_path("ran-locally");
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        &json!({"command": format!("touch {}", marker.display())}).to_string(),
    ));
    sb.mock.push(Reply::text("done"));
    let out = sb.chat("go", &["--yolo"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("modal is not available in this build"),
        "{err}"
    );
    assert!(err.contains("local, sandbox"), "{err}");
    assert!(!marker.exists());
}

/// A real OpenSSH server on a loopback port, accepting one generated key.
struct Sshd {
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
}

impl Sshd {
    fn start() -> Option<Self> {
        let sshd = Path::new("/usr/sbin/sshd");
        if !sshd.exists() {
            eprintln!("SKIPPED: /usr/sbin/sshd is not installed (apt install openssh-server)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for (key, extra) in [("host_key", ""), ("client_key", "")] {
            let ok = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", extra, "-f"])
                .arg(d.join(key))
                .status()
                .unwrap()
                .success();
            assert!(ok, "ssh-keygen");
        }
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
        std::fs::create_dir_all(d.join("remote")).unwrap();
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = free_port();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\nPidFile {dir}/sshd.pid\n\
                 AuthorizedKeysFile {dir}/authorized_keys\nStrictModes no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nUsePAM no\nPermitRootLogin yes\n\
                 SetEnv HERMES_VIA_SSHD=yes\n",
                dir = d.display()
            ),
        )
        .unwrap();
        let mut me = Self {
            dir,
            port,
            child: None,
        };
        if !me.up() {
            eprintln!("SKIPPED: sshd would not start here");
            return None;
        }
        Some(me)
    }

    fn up(&mut self) -> bool {
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(self.dir.path().join("sshd_config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        false
    }

    /// Kills the server and every session it serves (a broken host).
    fn down(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let config = self.dir.path().join("sshd_config");
        let _ = Command::new("pkill")
            .args(["-f", &format!("sshd.*{}", config.display())])
            .status();
        let _ = Command::new("pkill").args(["-f", "sshd: root"]).status();
    }

    fn remote(&self) -> PathBuf {
        self.dir.path().join("remote")
    }

    fn configure(&self, sb: &Sandbox) {
        let user = String::from_utf8(Command::new("whoami").output().unwrap().stdout).unwrap();
        sb.add_config(&format!(
            "terminal:\n  backend: ssh\n  ssh_host: 127.0.0.1\n  ssh_port: {}\n  ssh_user: {}\n  \
             ssh_key: {}\n  cwd: {}\n",
            self.port,
            user.trim(),
            self.dir.path().join("client_key").display(),
            self.remote().display()
        ));
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.down();
    }
}

#[test]
fn over_ssh_the_tools_act_on_the_remote_host_and_a_dead_host_runs_nothing() {
    let Some(mut sshd) = Sshd::start() else {
        return;
    };
    let sb = Sandbox::start();
    sb.no_retries();
    sshd.configure(&sb);
    let [edit, mut look] = file_round_trip("notes.txt");
    look.push((
        "terminal",
        json!({"command": "echo via-$HERMES_VIA_SSHD > mark.txt; pwd"}),
    ));
    let second = vec![("terminal", json!({"command": "sleep 1; cat bg.txt"}))];
    let results = run_batches(&sb, &[edit, look, second]);
    let remote = sshd.remote();
    assert_eq!(
        std::fs::read_to_string(remote.join("notes.txt")).unwrap(),
        "alpha\ngamma\n",
        "{:?}",
        results
    );
    assert!(
        !sb.work_path("notes.txt").exists(),
        "nothing landed in the local workspace"
    );
    assert!(results[1][0].contains("gamma"), "{}", results[1][0]);
    assert!(results[1][1].contains("gamma"), "{}", results[1][1]);
    assert_eq!(
        std::fs::read_to_string(remote.join("mark.txt"))
            .unwrap()
            .trim(),
        "via-yes",
        "the command ran in an sshd session"
    );
    assert!(
        results[2][0].contains("from-the-background"),
        "{}",
        results[2][0]
    );

    // The connection dies mid-session (its master is killed from inside):
    // that command fails with a word about ssh, the next one reconnects.
    let log = remote.join("log.txt");
    let append = format!(
        "echo ran-${{HERMES_VIA_SSHD:-locally}} >> {}",
        log.display()
    );
    let cut = run_batches(
        &sb,
        &[vec![
            (
                "terminal",
                json!({"command": "pkill -f hermes-ssh-; sleep 5"}),
            ),
            ("terminal", json!({"command": append})),
        ]],
    );
    assert!(cut[0][0].contains("ssh exited 255"), "{}", cut[0][0]);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap().trim(),
        "ran-yes",
        "{}",
        cut[0][1]
    );
    // The host is down: the session does not start, and nothing runs here.
    sshd.down();
    std::fs::remove_file(&log).unwrap();
    let marker = sb.work_path("ran-locally");
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        &json!({"command": format!("touch {}", marker.display())}).to_string(),
    ));
    sb.mock.push(Reply::text("done"));
    let out = sb.chat("go", &["--yolo"]);
    assert!(
        !out.status.success(),
        "a session started with the host down"
    );
    let err = stderr(&out);
    assert!(err.contains("ssh"), "{err}");
    assert!(
        !marker.exists() && !log.exists(),
        "something ran while the host was down"
    );
}

#[test]
fn doctor_checks_the_configured_backend() {
    let sb = Sandbox::start();
    sb.add_config("terminal:\n  backend: daytona\n");
    let out = sb.run(&["doctor"]);
    let text = stdout(&out);
    assert!(text.contains("Terminal Backend"), "{text}");
    assert!(
        text.contains("daytona is not available in this build"),
        "{text}"
    );
    let sb = Sandbox::start();
    sb.add_config(
        "terminal:\n  backend: ssh\n  ssh_host: 127.0.0.1\n  ssh_user: nobody\n  ssh_port: 1\n",
    );
    let text = stdout(&sb.run(&["doctor"]));
    assert!(text.contains("ssh"), "{text}");
    assert!(text.contains("cannot be reached"), "{text}");
}

/// Whether a container engine answers here (`docker info`).
fn engine() -> Result<(), String> {
    let out = Command::new("docker")
        .arg("info")
        .output()
        .map_err(|e| format!("no docker CLI ({e})"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

#[test]
fn docker_runs_the_tools_in_a_container_or_refuses_to_start() {
    let sb = Sandbox::start();
    sb.no_retries();
    let image = std::env::var("HERMES_TEST_DOCKER_IMAGE").unwrap_or_else(|_| "debian:12".into());
    sb.add_config(&format!(
        "terminal:\n  backend: docker\n  docker_image: {image}\n  container_persistent: false\n"
    ));
    if let Err(why) = engine() {
        // No engine: the session must not start (and nothing runs here).
        eprintln!("SKIPPED the container round trip: no engine answers ({why})");
        if Command::new("docker").arg("--version").output().is_err() {
            return;
        }
        let marker = sb.work_path("ran-locally");
        sb.mock.push(Reply::tool_call(
            "c1",
            "terminal",
            &json!({"command": format!("touch {}", marker.display())}).to_string(),
        ));
        sb.mock.push(Reply::text("done"));
        let out = sb.chat("go", &["--yolo"]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains("docker"), "{}", stderr(&out));
        assert!(!marker.exists());
        return;
    }
    let [edit, look] = file_round_trip("notes.txt");
    let results = run_batches(&sb, &[edit, look]);
    assert!(results[1][0].contains("gamma"), "{results:?}");
    assert!(results[1][1].contains("gamma"), "{results:?}");
    assert!(
        !sb.work_path("notes.txt").exists(),
        "the file stayed in the container"
    );
}
