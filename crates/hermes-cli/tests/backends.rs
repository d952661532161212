//! Where commands run (`terminal.backend`), through the binary with a
//! scripted model: the model writes a file, patches it, searches it, reads
//! it back, runs a command and a background process, all inside the
//! configured environment. The sandbox keeps writes in the workspace, hides
//! secrets and cuts the network; the container runs on a real engine; an
//! unknown backend is an error, never a local run (SSH: `backends_ssh.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;
use support::backends::{file_round_trip, refuses_to_start, run_batches, run_batches_with};
use support::*;

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
    assert!(
        !Path::new("/opt/widened.txt").exists(),
        "a workdir widened the box"
    );
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
    let err = refuses_to_start(&sb);
    assert!(
        err.contains("modal is not available in this build"),
        "{err}"
    );
    assert!(err.contains("local, sandbox"), "{err}");
}

/// A real OpenSSH server on a loopback port, accepting one generated key.
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

/// The test image: a busybox + static bash root filesystem imported as an
/// image, so no registry is needed (every command runs `bash -c`; busybox
/// has the sh, cat, find … the file tools use), with this machine's GNU
/// grep and its libraries, as search_files uses GNU options
/// (`--exclude-dir`) that busybox grep lacks. Bump the tag when the recipe
/// changes.
const TEST_IMAGE: &str = "localhost/hermes-test-busybox:2";

/// A container engine that runs containers here.
struct Engine {
    /// What Hermes is configured to run (`terminal.docker_cli`): the engine,
    /// or for podman a wrapper that points it at the test's containers.conf.
    cli: PathBuf,
    image: String,
    _dir: tempfile::TempDir,
}

impl Engine {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new(&self.cli).args(args).output().unwrap()
    }

    /// Removes the container at once (`rm -f` alone waits for `sleep`,
    /// which ignores SIGTERM as PID 1, to time out on podman).
    fn remove(&self, name: &str) {
        let _ = self.cmd(&["kill", name]);
        let _ = self.cmd(&["rm", "-f", name]);
    }
}

/// Finds an engine that answers (`docker info`, then `podman info`, as
/// `Docker::new` does), makes it able to run containers here and builds
/// the test image when missing; the reason when none can run a container.
///
/// Podman as root inside a restricted container (as on the CI machines)
/// needs its containers.conf (through `CONTAINERS_CONF`, so the machine's
/// configuration is untouched): the ulimits it sets by default (nofile
/// 1048576, nproc 4194304) are above this process's hard limits and raising
/// them needs CAP_SYS_RESOURCE; and crun refuses a hybrid cgroup hierarchy
/// with controllers on the v2 mount, where runc works.
fn engine() -> Result<Engine, String> {
    let answers = |cli: &str| {
        Command::new(cli)
            .arg("info")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let dir = tempfile::tempdir().unwrap();
    let cli = if answers("docker") {
        PathBuf::from("docker")
    } else if answers("podman") {
        // This process's hard limits (those of the engine's containers too).
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        let hard = |what: &str| {
            let line = limits.lines().find(|l| l.starts_with(what)).unwrap();
            let value = line[what.len()..].split_whitespace().nth(1).unwrap();
            if value == "unlimited" {
                "1048576"
            } else {
                value
            }
            .to_owned()
        };
        // Podman runs its containers' monitors with nproc lowered to
        // pid_max (seen here: 32768 under a hard limit of 96365), and a
        // limit above theirs cannot be set; at pid_max it limits nothing.
        let pid_max = std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .ok()
            .and_then(|p| p.trim().parse::<u64>().ok())
            .unwrap_or(32768);
        let nofile = hard("Max open files");
        let nproc = hard("Max processes").parse::<u64>().unwrap().min(pid_max);
        let runc = Command::new("runc").arg("--version").output().is_ok();
        let conf = dir.path().join("containers.conf");
        std::fs::write(
            &conf,
            format!(
                "[containers]\ndefault_ulimits = [\"nofile={nofile}:{nofile}\", \"nproc={nproc}:{nproc}\"]\n{}",
                if runc { "[engine]\nruntime = \"runc\"\n" } else { "" }
            ),
        )
        .unwrap();
        let wrapper = dir.path().join("podman");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nCONTAINERS_CONF='{}' exec podman \"$@\"\n",
                conf.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        wrapper
    } else {
        return Err("neither `docker info` nor `podman info` answers".into());
    };
    let mut engine = Engine {
        cli,
        image: TEST_IMAGE.into(),
        _dir: dir,
    };
    if let Ok(image) = std::env::var("HERMES_TEST_DOCKER_IMAGE") {
        engine.image = image;
    } else if !engine
        .cmd(&["image", "inspect", TEST_IMAGE])
        .status
        .success()
    {
        build_image(&engine)?;
    }
    let ran = engine.cmd(&["run", "--rm", &engine.image, "bash", "-c", "true"]);
    if !ran.status.success() {
        return Err(format!(
            "{} cannot run a container here: {}",
            engine.cli.display(),
            String::from_utf8_lossy(&ran.stderr).trim()
        ));
    }
    Ok(engine)
}

/// Imports [`TEST_IMAGE`] from Debian's busybox-static and bash-static.
fn build_image(engine: &Engine) -> Result<(), String> {
    let (busybox, bash) = (Path::new("/bin/busybox"), Path::new("/bin/bash-static"));
    if !busybox.exists() || !bash.exists() {
        return Err("no image: apt install busybox-static bash-static".into());
    }
    let root = tempfile::tempdir().unwrap();
    let bin = root.path().join("bin");
    for dir in ["bin", "tmp", "workspace", "etc"] {
        std::fs::create_dir_all(root.path().join(dir)).unwrap();
    }
    std::fs::copy(busybox, bin.join("busybox")).unwrap();
    std::fs::copy(bash, bin.join("bash")).unwrap();
    let applets = Command::new(busybox).arg("--list").output().unwrap();
    for applet in String::from_utf8_lossy(&applets.stdout).split_whitespace() {
        if !bin.join(applet).exists() {
            std::os::unix::fs::symlink("busybox", bin.join(applet)).unwrap();
        }
    }
    std::fs::write(
        root.path().join("etc/passwd"),
        "root:x:0:0:root:/root:/bin/bash\n",
    )
    .unwrap();
    let grep = Path::new("/bin/grep");
    let libs = Command::new("ldd").arg(grep).output().unwrap();
    for file in String::from_utf8_lossy(&libs.stdout)
        .split_whitespace()
        .filter(|t| t.starts_with('/'))
        .chain(["/bin/grep"])
    {
        let to = root.path().join(file.trim_start_matches('/'));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&to);
        std::fs::copy(file, &to).unwrap();
    }
    let tar = root.path().with_extension("tar");
    let packed = Command::new("tar")
        .arg("-C")
        .arg(root.path())
        .arg("-cf")
        .arg(&tar)
        .arg(".")
        .status()
        .unwrap();
    assert!(packed.success(), "tar");
    let imported = engine.cmd(&["import", &tar.display().to_string(), TEST_IMAGE]);
    let _ = std::fs::remove_file(&tar);
    if imported.status.success() {
        Ok(())
    } else {
        Err(format!(
            "cannot import the test image: {}",
            String::from_utf8_lossy(&imported.stderr).trim()
        ))
    }
}

/// This machine's address on its default route (not loopback), which a
/// container with a network could reach.
fn host_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("198.51.100.1:9").ok()?;
    Some(socket.local_addr().ok()?.ip()).filter(|ip| !ip.is_loopback())
}

/// Removes the test's container however the test ends.
struct Container<'a>(&'a Engine, String);

impl Drop for Container<'_> {
    fn drop(&mut self) {
        self.0.remove(&self.1);
    }
}

#[test]
fn docker_runs_the_tools_in_a_container_or_refuses_to_start() {
    let sb = Sandbox::start();
    sb.no_retries();
    let engine = match engine() {
        Ok(engine) => engine,
        Err(why) => {
            assert!(
                std::env::var_os("HERMES_REQUIRE_DOCKER").is_none(),
                "HERMES_REQUIRE_DOCKER is set but no container runs here: {why}"
            );
            // No engine: the session must not start (and nothing runs here).
            eprintln!("SKIPPED the container round trip: {why}");
            if Command::new("docker").arg("--version").output().is_err()
                && Command::new("podman").arg("--version").output().is_err()
            {
                return;
            }
            sb.add_config("terminal:\n  backend: docker\n  docker_image: debian:12\n");
            let err = refuses_to_start(&sb);
            assert!(err.contains("docker"), "{err}");
            return;
        }
    };
    sb.add_config(&format!(
        "terminal:\n  backend: docker\n  docker_image: {}\n  docker_cli: {}\n  \
         container_persistent: false\n  docker_network: false\n  container_memory: 512\n",
        engine.image,
        engine.cli.display()
    ));
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let host = host_address().map_or_else(|| "127.0.0.1".to_owned(), |ip| ip.to_string());
    let [edit, look] = file_round_trip("notes.txt");
    let mut third = vec![
        ("terminal", json!({"command": "sleep 1; cat bg.txt; pwd"})),
        (
            "terminal",
            json!({"command": "echo \"nets=$(ls /sys/class/net | tr '\\n' ,)=end\""}),
        ),
    ];
    for addr in ["127.0.0.1", host.as_str()] {
        third.push((
            "terminal",
            json!({"command": format!("exec 3<>/dev/tcp/{addr}/{port} && echo connected")}),
        ));
    }
    let results = run_batches(&sb, &[edit, look, third]);
    let prompt = sb.requests()[0].to_string();
    let name = prompt
        .split("run in the container ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("the model is not told where it runs: {prompt}"))
        .to_owned();
    let container = Container(&engine, name.clone());
    let (edit, look, third) = (&results[0], &results[1], &results[2]);
    assert!(edit[0].contains("bytes_written"), "{}", edit[0]);
    assert!(edit[1].contains("\"success\":true"), "{}", edit[1]);
    assert!(look[0].contains("gamma"), "{}", look[0]);
    assert!(look[1].contains("gamma"), "{}", look[1]);
    assert!(
        look[2].contains('2') && look[2].contains("gamma"),
        "{}",
        look[2]
    );
    assert!(third[0].contains("from-the-background"), "{}", third[0]);
    assert!(third[0].contains("/workspace"), "{}", third[0]);
    // The file is in the container, not on the host.
    assert!(
        !sb.work_path("notes.txt").exists(),
        "the file landed on the host"
    );
    let inside = engine.cmd(&["exec", &name, "cat", "/workspace/notes.txt"]);
    assert_eq!(String::from_utf8_lossy(&inside.stdout), "alpha\ngamma\n");
    // docker_network: false is --network none: only loopback, and nothing
    // outside the container answers.
    assert!(third[1].contains("nets=lo,=end"), "{}", third[1]);
    assert!(!third[2].contains("connected"), "{}", third[2]);
    assert!(!third[3].contains("connected"), "{}", third[3]);
    assert!(
        listener.accept().is_err(),
        "the container reached a server on the host"
    );

    // The container vanishes between two turns: the next one recreates it
    // (a fresh one: the workspace was not persistent).
    container.0.remove(&name);
    let again = run_batches(
        &sb,
        &[vec![(
            "terminal",
            json!({"command": "cat notes.txt || echo no-notes; echo again > again.txt; cat again.txt"}),
        )]],
    );
    assert!(again[0][0].contains("no-notes"), "{}", again[0][0]);
    assert!(again[0][0].contains("again"), "{}", again[0][0]);
    let running = engine.cmd(&["inspect", "-f", "{{.State.Running}}", &name]);
    assert_eq!(String::from_utf8_lossy(&running.stdout).trim(), "true");
}

/// An Engine API socket for `engine`: Docker's own when it answers, else a
/// `podman system service` on a socket of the test's (with the engine's
/// containers.conf), stopped at the end.
struct EngineSocket {
    path: PathBuf,
    service: Option<std::process::Child>,
}

impl EngineSocket {
    fn pings(path: &Path) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::os::unix::net::UnixStream::connect(path) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
        if stream
            .write_all(b"GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n")
            .is_err()
        {
            return false;
        }
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer.starts_with("HTTP/1.") && answer.contains(" 200 ")
    }

    fn start(engine: &Engine) -> Option<Self> {
        let docker = PathBuf::from("/var/run/docker.sock");
        if Self::pings(&docker) {
            return Some(Self {
                path: docker,
                service: None,
            });
        }
        let conf = engine._dir.path().join("containers.conf");
        let path = engine._dir.path().join("engine.sock");
        let mut cmd = Command::new("podman");
        if conf.exists() {
            cmd.env("CONTAINERS_CONF", &conf);
        }
        let service = cmd
            .args(["system", "service", "--time=0"])
            .arg(format!("unix://{}", path.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut socket = Self {
            path,
            service: Some(service),
        };
        for _ in 0..200 {
            if Self::pings(&socket.path) {
                return Some(socket);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        socket.stop();
        None
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.service.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for EngineSocket {
    fn drop(&mut self) {
        self.stop();
    }
}

#[test]
fn docker_through_the_engine_api_runs_the_tools_in_a_container() {
    let sb = Sandbox::start();
    sb.no_retries();
    let engine = match engine() {
        Ok(engine) => engine,
        Err(why) => {
            assert!(
                std::env::var_os("HERMES_REQUIRE_DOCKER").is_none(),
                "HERMES_REQUIRE_DOCKER is set but no container runs here: {why}"
            );
            eprintln!("SKIPPED the Engine API round trip: {why}");
            return;
        }
    };
    let Some(socket) = EngineSocket::start(&engine) else {
        assert!(
            std::env::var_os("HERMES_REQUIRE_DOCKER").is_none(),
            "HERMES_REQUIRE_DOCKER is set but no Engine API socket answers here"
        );
        eprintln!("SKIPPED the Engine API round trip: no engine socket answers");
        return;
    };
    // No docker_cli: the socket is used, and the docker CLI is not needed.
    sb.add_config(&format!(
        "terminal:\n  backend: docker\n  docker_image: {}\n  container_persistent: false\n  \
         docker_network: false\n  docker_forward_env: [HERMES_FORWARDED]\n",
        engine.image
    ));
    let host = format!("unix://{}", socket.path.display());
    let env = [
        ("DOCKER_HOST", host.as_str()),
        ("HERMES_FORWARDED", "passed-by-name"),
    ];
    let [edit, mut look] = file_round_trip("notes.txt");
    look.push((
        "terminal",
        json!({"command": "echo \"fwd=$HERMES_FORWARDED\"; exit 3"}),
    ));
    let third = vec![("terminal", json!({"command": "sleep 1; cat bg.txt; pwd"}))];
    let results = run_batches_with(&sb, &env, &[edit, look, third]);
    let prompt = sb.requests()[0].to_string();
    assert!(prompt.contains("through the Engine API at"), "{prompt}");
    let name = prompt
        .split("run in the container ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("the model is not told where it runs: {prompt}"))
        .to_owned();
    let _container = Container(&engine, name.clone());
    let (edit, look, third) = (&results[0], &results[1], &results[2]);
    assert!(edit[0].contains("bytes_written"), "{}", edit[0]);
    assert!(edit[1].contains("\"success\":true"), "{}", edit[1]);
    assert!(look[0].contains("gamma"), "{}", look[0]);
    assert!(look[1].contains("gamma"), "{}", look[1]);
    assert!(
        look[2].contains('2') && look[2].contains("gamma"),
        "{}",
        look[2]
    );
    assert!(
        look[4].contains("fwd=passed-by-name") && look[4].contains("\"exit_code\":3"),
        "a forwarded variable arrives and the exit status comes back: {}",
        look[4]
    );
    assert!(third[0].contains("from-the-background"), "{}", third[0]);
    assert!(third[0].contains("/workspace"), "{}", third[0]);
    assert!(
        !sb.work_path("notes.txt").exists(),
        "the file landed on the host"
    );
    let inside = engine.cmd(&["exec", &name, "cat", "/workspace/notes.txt"]);
    assert_eq!(String::from_utf8_lossy(&inside.stdout), "alpha\ngamma\n");
    // Hardened and labelled as the API made it: only CHOWN, DAC_OVERRIDE,
    // FOWNER, SETGID, SETUID and KILL left (0xeb), no new privileges.
    let status = engine.cmd(&["exec", &name, "cat", "/proc/self/status"]);
    let status = String::from_utf8_lossy(&status.stdout);
    let field = |key: &str| {
        status
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(field("CapEff:"), "00000000000000eb", "{status}");
    assert_eq!(field("NoNewPrivs:"), "1", "{status}");
    let inspect = engine.cmd(&[
        "inspect",
        "-f",
        "{{.HostConfig.NetworkMode}} {{index .Config.Labels \"hermes.managed\"}}",
        &name,
    ]);
    assert_eq!(String::from_utf8_lossy(&inspect.stdout).trim(), "none 1");
}
