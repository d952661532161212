use std::time::Duration;

use super::*;

fn opts(dir: &Path, with_stdin: bool) -> SpawnOptions<'_> {
    SpawnOptions {
        cwd: dir,
        hidden_env: &[],
        with_stdin,
        notify: false,
    }
}

#[tokio::test]
async fn output_and_exit_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::default();
    let p = table
        .spawn(
            "printf 'one\\ntwo\\n'; echo err >&2; exit 3",
            opts(dir.path(), false),
        )
        .unwrap();
    assert!(p.id.starts_with("proc_") && p.id.len() == 17, "{}", p.id);
    let exit = p.wait(Duration::from_secs(10)).await.unwrap();
    assert_eq!(
        exit,
        Exit {
            code: 3,
            killed: false
        }
    );
    // The reader may finish a moment after the exit.
    for _ in 0..50 {
        if p.lines().len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(p.lines(), vec!["one", "two", "err"]);
    assert_eq!(p.tail(4), "err\n");
    assert_eq!(table.list().len(), 1);
    assert!(table.running().is_empty());
}

#[tokio::test]
async fn kill_ends_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::default();
    let p = table
        .spawn("sleep 300 & sleep 300; wait", opts(dir.path(), false))
        .unwrap();
    assert_eq!(p.wait(Duration::from_millis(200)).await, None);
    let exit = p.kill().await.unwrap();
    assert!(exit.killed && exit.code == -15, "{exit:?}");
    // Nothing of the group is left (once the orphans are reaped).
    let group = nix::unistd::Pid::from_raw(i32::try_from(p.pid).unwrap());
    let mut gone = false;
    for _ in 0..100 {
        if nix::sys::signal::killpg(group, None).is_err() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "members of the group survived");
    assert_eq!(p.kill().await, None);
}

#[tokio::test]
async fn stdin_is_writable_only_when_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::default();
    let quiet = table.spawn("sleep 30", opts(dir.path(), false)).unwrap();
    assert!(quiet.write("x").await.unwrap_err().contains("pty=true"));
    let cat = table
        .spawn(
            "while read line; do echo \"got $line\"; done; echo bye",
            opts(dir.path(), true),
        )
        .unwrap();
    assert_eq!(cat.write("hello\n").await.unwrap(), 6);
    cat.close_stdin().await.unwrap();
    let exit = cat.wait(Duration::from_secs(10)).await.unwrap();
    assert_eq!(exit.code, 0);
    for _ in 0..50 {
        if cat.tail(100).contains("bye") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(cat.tail(100), "got hello\nbye\n");
    assert_eq!(table.kill_all().await, 1);
}

#[tokio::test]
async fn output_is_kept_as_a_bounded_tail() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::default();
    let p = table
        .spawn(
            "yes abcdefghi | head -c 500000; echo; echo END",
            opts(dir.path(), false),
        )
        .unwrap();
    p.wait(Duration::from_secs(20)).await.unwrap();
    for _ in 0..100 {
        if p.tail(10).contains("END") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let all = p.tail(usize::MAX);
    assert!(all.chars().count() <= MAX_OUTPUT_CHARS, "{}", all.len());
    assert!(all.ends_with("END\n"));
}

#[tokio::test]
async fn a_dropped_table_kills_what_still_runs_unless_released() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::default();
    let p = table.spawn("sleep 300", opts(dir.path(), false)).unwrap();
    let group = nix::unistd::Pid::from_raw(i32::try_from(p.pid).unwrap());
    drop(table);
    let mut gone = false;
    for _ in 0..100 {
        if nix::sys::signal::killpg(group, None).is_err() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone);

    let table = ProcessTable::default();
    let kept = table.spawn("sleep 300", opts(dir.path(), false)).unwrap();
    let group = nix::unistd::Pid::from_raw(i32::try_from(kept.pid).unwrap());
    table.release_all();
    drop(table);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(nix::sys::signal::killpg(group, None).is_ok());
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::SIGKILL);
}

#[tokio::test]
async fn ends_are_announced_once_unless_the_agent_saw_them() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::announcing();
    let notify = |with| SpawnOptions {
        notify: with,
        ..opts(dir.path(), false)
    };
    let told = table.spawn("echo done-here; exit 2", notify(true)).unwrap();
    let seen = table.spawn("true", notify(true)).unwrap();
    let quiet = table.spawn("true", notify(false)).unwrap();
    for p in [&told, &seen, &quiet] {
        p.wait(Duration::from_secs(10)).await.unwrap();
    }
    for _ in 0..50 {
        if told.tail(100).contains("done-here") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    seen.mark_consumed();
    let notes = table.take_announcements();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with(&format!(
        "[IMPORTANT: Background process {} exited (exit code 2).",
        told.id
    )));
    assert!(
        notes[0].contains("Command: echo done-here; exit 2") && notes[0].contains("done-here\n")
            || notes[0].contains("Output:\ndone-here"),
        "{}",
        notes[0]
    );
    assert!(table.take_announcements().is_empty());
}
