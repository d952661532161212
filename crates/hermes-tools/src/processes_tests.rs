use std::time::Duration;

use super::*;

fn opts(dir: &Path, with_stdin: bool) -> SpawnOptions<'_> {
    SpawnOptions {
        cwd: dir,
        hidden_env: &[],
        stdin: if with_stdin {
            StdinMode::Pipe
        } else {
            StdinMode::Null
        },
        notify: false,
        watch_patterns: &[],
        environment: None,
    }
}

fn on_terminal(dir: &Path) -> SpawnOptions<'_> {
    SpawnOptions {
        stdin: StdinMode::Terminal,
        ..opts(dir, false)
    }
}

/// Waits until the process's output contains `text`; the output.
async fn output_with(p: &Background, text: &str) -> String {
    for _ in 0..250 {
        let out = p.tail(usize::MAX);
        if out.contains(text) {
            return out;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no {text:?} in the output: {:?}", p.tail(usize::MAX));
}

fn python3() -> bool {
    let found = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        eprintln!("SKIPPED: python3 is not installed");
    }
    found
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

#[tokio::test]
async fn an_announced_end_wakes_the_session_with_all_of_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::announcing();
    let quiet = table.spawn("true", opts(dir.path(), false)).unwrap();
    quiet.wait(Duration::from_secs(10)).await.unwrap();
    assert!(!table.has_announcements());
    let told = table
        .spawn(
            "sleep 0.2; echo last-words",
            SpawnOptions {
                notify: true,
                ..opts(dir.path(), false)
            },
        )
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), table.announcement_ready())
        .await
        .expect("no wake-up when the process ended");
    // Woken only once it is over and its output read.
    assert!(told.exit().is_some());
    assert!(table.has_announcements());
    let notes = table.take_announcements();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].ends_with("Output:\nlast-words]"), "{}", notes[0]);
    assert!(!table.has_announcements());
}

#[tokio::test]
async fn a_watch_match_wakes_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::announcing();
    let patterns = ["ready-now".to_owned()];
    let p = table
        .spawn(
            "sleep 0.1; echo ready-now; sleep 30",
            SpawnOptions {
                watch_patterns: &patterns,
                ..opts(dir.path(), false)
            },
        )
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), table.announcement_ready())
        .await
        .expect("no wake-up for the match");
    assert!(table.has_announcements());
    assert_eq!(table.take_announcements().len(), 1);
    p.kill().await;
}

#[tokio::test]
async fn a_terminal_process_sees_a_tty_of_thirty_by_a_hundred_and_twenty() {
    if !python3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::default();
    let p = table
        .spawn(
            "python3 -c \"import sys, os; print(sys.stdin.isatty(), sys.stdout.isatty(), \
             sys.stderr.isatty()); print(os.get_terminal_size())\"",
            on_terminal(dir.path()),
        )
        .unwrap();
    assert!(p.terminal && p.terminal_error.is_none());
    assert_eq!(p.wait(Duration::from_secs(10)).await.unwrap().code, 0);
    let out = output_with(&p, "lines=30").await;
    assert!(out.contains("True True True\n"), "{out:?}");
    assert!(out.contains("columns=120, lines=30"), "{out:?}");
    // Plain line ends, as from a pipe.
    assert!(!out.contains('\r'), "{out:?}");
}

#[tokio::test]
async fn a_repl_on_a_terminal_answers_a_submitted_line_and_ends_on_eof() {
    if !python3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::default();
    let p = table
        .spawn("python3 -i -q", on_terminal(dir.path()))
        .unwrap();
    output_with(&p, ">>> ").await;
    p.write("print(6 * 7)\n").await.unwrap();
    let out = output_with(&p, "42\n").await;
    // The terminal echoes what was typed, as it would for a person.
    assert!(out.contains("print(6 * 7)"), "{out:?}");
    assert_eq!(p.close_stdin().await.unwrap(), "EOF sent");
    let exit = p.wait(Duration::from_secs(10)).await.unwrap();
    assert_eq!(exit.code, 0);
}

#[tokio::test]
async fn ctrl_c_written_to_the_terminal_interrupts_the_program() {
    if !python3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::default();
    let p = table
        .spawn("python3 -i -q", on_terminal(dir.path()))
        .unwrap();
    output_with(&p, ">>> ").await;
    p.write("import time; time.sleep(60)\n").await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    p.write("\u{3}").await.unwrap();
    output_with(&p, "KeyboardInterrupt").await;
    assert!(p.exit().is_none(), "the REPL survives its interrupt");
    p.write("print('still here')\n").await.unwrap();
    output_with(&p, "still here\n").await;
    assert_eq!(table.kill_all().await, 1);
}

#[tokio::test]
async fn eof_after_unfinished_text_still_ends_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::default();
    let p = table
        .spawn(
            "test -t 0 && echo on-a-tty; exec 3</dev/tty && echo has-ctty; cat; echo cat-done",
            on_terminal(dir.path()),
        )
        .unwrap();
    output_with(&p, "has-ctty").await;
    assert!(p.tail(100).contains("on-a-tty\n"));
    p.write("abc").await.unwrap();
    p.close_stdin().await.unwrap();
    let exit = p.wait(Duration::from_secs(10)).await.unwrap();
    assert_eq!(exit.code, 0);
    let out = output_with(&p, "cat-done").await;
    // Echoed once by the terminal, once by cat.
    assert!(out.contains("abcabc"), "{out:?}");
    assert!(p.write("x").await.unwrap_err().contains("already finished"));
}

#[tokio::test]
async fn a_watched_pattern_is_announced_while_the_process_runs() {
    let dir = tempfile::tempdir().unwrap();
    let table = ProcessTable::announcing();
    let patterns = vec!["ready".to_owned()];
    for stdin in [StdinMode::Null, StdinMode::Terminal] {
        let p = table
            .spawn(
                "echo starting; sleep 0.1; printf 'Server \\033[1mready\\033[0m on :80\\n'; sleep 30",
                SpawnOptions {
                    stdin,
                    watch_patterns: &patterns,
                    ..opts(dir.path(), false)
                },
            )
            .unwrap();
        let mut notes = Vec::new();
        for _ in 0..250 {
            notes = table.take_announcements();
            if !notes.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(
            notes,
            [format!(
                "[IMPORTANT: Background process {} matched watch pattern \"ready\".\n\
                 Command: {}\nMatched output:\nServer ready on :80]",
                p.id, p.command
            )]
        );
        assert!(p.watch_hit() && p.exit().is_none());
        // Watching alone announces no exit.
        p.kill().await.unwrap();
        assert!(table.take_announcements().is_empty());
    }
}

#[tokio::test]
async fn without_setsid_the_terminal_is_still_the_programs_streams() {
    let dir = tempfile::tempdir().unwrap();
    let pair = pty::open().unwrap();
    let mut child = launch::start_on(
        "test -t 0 && test -t 1 && test -t 2 && sleep 1",
        &on_terminal(dir.path()),
        &pair.slave,
        false,
    )
    .unwrap();
    drop(pair.slave);
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    assert_eq!(nix::unistd::getpgid(Some(pid)).unwrap(), pid);
    assert!(child.wait().await.unwrap().success());
}
