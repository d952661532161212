//! The backend tests' helpers: scripted tool batches through one turn, the
//! file round trip every backend must pass, and a real `sshd` on loopback.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use hermes_mock::Reply;
use serde_json::{Value, json};

use super::*;

/// Scripts `batches` of tool calls (then a closing answer), runs one
/// non-interactive turn with `--yolo`, and returns each batch's results.
pub fn run_batches(sb: &Sandbox, batches: &[Vec<(&str, Value)>]) -> Vec<Vec<String>> {
    run_batches_with(sb, &[], batches)
}

/// [`run_batches`] with more variables for the binary.
pub fn run_batches_with(
    sb: &Sandbox,
    env: &[(&str, &str)],
    batches: &[Vec<(&str, Value)>],
) -> Vec<Vec<String>> {
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
    let out = sb
        .command()
        .envs(env.iter().copied())
        .args(["chat", "-q", "work in the environment", "-Q", "--yolo"])
        .output()
        .unwrap();
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
pub fn file_round_trip(file: &str) -> [Vec<(&'static str, Value)>; 2] {
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

/// Runs a turn whose model wants to `touch` a marker; the session must not
/// start and nothing may run here. Returns what it said on stderr.
pub fn refuses_to_start(sb: &Sandbox) -> String {
    let marker = sb.work_path("ran-locally");
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        &json!({"command": format!("touch {}", marker.display())}).to_string(),
    ));
    sb.mock.push(Reply::text("done"));
    let out = sb.chat("go", &["--yolo"]);
    assert!(!out.status.success(), "a session started: {}", stdout(&out));
    assert!(!marker.exists(), "the command ran on this machine");
    stderr(&out)
}

/// One SSH test at a time, across test processes (nextest runs each test
/// in its own): taking a host down kills every `sshd: root` session and
/// one test kills every ssh master, which would cut the others' connections.
fn one_at_a_time() -> std::fs::File {
    let path = std::env::temp_dir().join("hermes-sshd-tests.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap();
    file.lock().unwrap();
    file
}

/// A real `sshd` on a free loopback port, with its own host key, an
/// authorized client key and a remote home of its own.
pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    child: Option<Child>,
    /// Held while this server lives (see [`one_at_a_time`]).
    _turn: std::fs::File,
}

impl Sshd {
    pub fn start() -> Option<Self> {
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
        // The remote user's home (where its checkpoint store goes), not ours.
        std::fs::create_dir_all(d.join("remote_home")).unwrap();
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = free_port();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\nPidFile {dir}/sshd.pid\n\
                 AuthorizedKeysFile {dir}/authorized_keys\nStrictModes no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nUsePAM no\nPermitRootLogin yes\n\
                 SetEnv HERMES_VIA_SSHD=yes HOME={dir}/remote_home\n",
                dir = d.display()
            ),
        )
        .unwrap();
        let mut me = Self {
            dir,
            port,
            child: None,
            _turn: one_at_a_time(),
        };
        if !me.up() {
            eprintln!("SKIPPED: sshd would not start here");
            return None;
        }
        Some(me)
    }

    pub fn up(&mut self) -> bool {
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
    pub fn down(&mut self) {
        // Its connections first (found by parentage: every root sshd session
        // on the machine has the same title, and the person running the
        // tests may be logged in through one).
        if let Some(c) = self.child.as_ref() {
            for pid in descendants(c.id()) {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        }
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let config = self.dir.path().join("sshd_config");
        let _ = Command::new("pkill")
            .args(["-f", &format!("sshd.*{}", config.display())])
            .status();
    }

    pub fn remote(&self) -> PathBuf {
        self.dir.path().join("remote")
    }

    pub fn configure(&self, sb: &Sandbox) {
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

/// Every process below `root` (children, their children, …), from /proc.
fn descendants(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (comm) state ppid …`: the comm may hold spaces, so after the last ')'.
            let ppid = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}
