//! The SSH backend against a real `sshd` started on loopback: the tools act
//! on the remote host, a dead host runs nothing here, checkpoints are kept
//! and restored there, and the gate reads the scripts a command runs there.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::process::Command;

use hermes_mock::Reply;
use serde_json::json;
use support::backends::{Sshd, file_round_trip, refuses_to_start, run_batches};
use support::*;

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
    let err = refuses_to_start(&sb);
    assert!(err.contains("ssh"), "{err}");
    assert!(!log.exists(), "something ran while the host was down");
}

#[test]
fn over_ssh_checkpoints_are_kept_on_the_remote_host_and_restore_there() {
    use hermes_tools::checkpoints::Checkpoints;
    let Some(sshd) = Sshd::start() else {
        return;
    };
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("SKIPPED: git is not installed");
        return;
    }
    let sb = Sandbox::start();
    sb.no_retries();
    sshd.configure(&sb);
    let remote = sshd.remote();
    std::fs::write(remote.join("notes.txt"), "first draft\n").unwrap();
    // Two turns, each changing the file: a checkpoint before each change.
    for (n, text) in [(1, "second draft\n"), (2, "third draft\n")] {
        sb.mock.push(Reply::tool_call(
            &format!("w{n}"),
            "write_file",
            &json!({"path": "notes.txt", "content": text}).to_string(),
        ));
        sb.mock.push(Reply::text("saved"));
        let out = sb.chat("revise the notes", &["--yolo", "--checkpoints"]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(
        std::fs::read_to_string(remote.join("notes.txt")).unwrap(),
        "third draft\n"
    );
    let store = sshd
        .dir
        .path()
        .join("remote_home/.hermes/checkpoints/store");
    assert!(
        store.join("HEAD").is_file(),
        "the store is on the remote host's home"
    );
    assert!(
        !sb.home.path().join("checkpoints/store").exists(),
        "nothing was snapshotted on this machine"
    );
    // What `/rollback` does, through the same environment.
    let user = String::from_utf8(Command::new("whoami").output().unwrap().stdout).unwrap();
    let env = hermes_env::Ssh::new(hermes_env::SshSettings {
        host: "127.0.0.1".into(),
        user: user.trim().into(),
        port: sshd.port,
        key: Some(sshd.dir.path().join("client_key").display().to_string()),
        cwd: Some(remote.display().to_string()),
        connect_timeout: 10,
    })
    .unwrap();
    let checkpoints = Checkpoints::in_environment(std::sync::Arc::new(env), true, 20);
    assert_eq!(checkpoints.project_of(&remote.join("notes.txt")), remote);
    let list = checkpoints.list(&remote);
    assert_eq!(list.len(), 2, "{list:?}");
    assert!(list[0].reason.contains("write_file"), "{list:?}");
    let diff = checkpoints.diff(&remote, &list[1].hash).unwrap();
    assert!(
        diff.contains("-first draft") && diff.contains("+third draft"),
        "{diff}"
    );
    checkpoints.restore(&remote, &list[1].hash, None).unwrap();
    assert_eq!(
        std::fs::read_to_string(remote.join("notes.txt")).unwrap(),
        "first draft\n",
        "restored on the remote host"
    );
    assert_eq!(
        checkpoints.list(&remote).len(),
        3,
        "a pre-rollback snapshot was taken"
    );
}

#[test]
fn over_ssh_a_script_is_judged_by_what_it_holds_on_the_remote_host() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let sb = Sandbox::start();
    sb.no_retries();
    sshd.configure(&sb);
    // The script exits before its last line, so even a gate that let it
    // through would delete nothing; the gate must refuse it for that line.
    let script = "#!/bin/sh\necho tidying > tidied.txt\nexit 0\nrm -rf /\n";
    let results = run_batches(
        &sb,
        &[
            vec![(
                "write_file",
                json!({"path": "cleanup.sh", "content": script}),
            )],
            vec![
                ("terminal", json!({"command": "bash cleanup.sh"})),
                ("terminal", json!({"command": "sh ./cleanup.sh"})),
                // A harmless script there is judged harmless and runs.
                (
                    "terminal",
                    json!({"command": "printf 'echo fine > fine.txt\\n' > ok.sh && bash ok.sh && cat fine.txt"}),
                ),
            ],
        ],
    );
    let remote = sshd.remote();
    assert_eq!(
        std::fs::read_to_string(remote.join("cleanup.sh")).unwrap(),
        script
    );
    for refused in &results[1][..2] {
        assert!(refused.contains("\"status\":\"blocked\""), "{refused}");
    }
    assert!(
        !remote.join("tidied.txt").exists(),
        "the script ran on the remote host"
    );
    assert!(results[1][2].contains("fine"), "{}", results[1][2]);
}
