#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::*;
use crate::Local;

fn tag() -> Tag {
    Tag {
        bytes: b"\x1eHERMES-abc ".to_vec(),
        printf: String::new(),
    }
}

fn split(marks: &mut Marks, chunks: &[&[u8]]) -> (Vec<u8>, Vec<String>, bool) {
    let mut data = Vec::new();
    let mut seen = Vec::new();
    let mut ended = false;
    for chunk in chunks {
        marks.push(chunk);
        ended |= marks.drain(&mut |p| match p {
            Piece::Data(d) => data.extend_from_slice(d),
            Piece::Mark(m) => seen.push(m.to_owned()),
        });
    }
    (data, seen, ended)
}

#[test]
fn marks_are_found_across_chunks_and_data_around_them_kept() {
    let mut marks = Marks::new(&tag());
    let (data, seen, ended) = split(
        &mut marks,
        &[
            b"hello \x1eHER",
            b"MES-abc P 42\nwor",
            b"ld\x1eHERMES-ab",
            b"c R 3\nnext",
        ],
    );
    assert_eq!(data, b"hello world");
    assert_eq!(seen, ["P 42", "R 3"]);
    assert!(ended);
    // What follows the end mark stays for the next command.
    assert_eq!(marks.held, b"next");
}

#[test]
fn a_lookalike_without_the_token_is_data() {
    let mut marks = Marks::new(&tag());
    let (data, seen, ended) = split(
        &mut marks,
        &[b"\x1eHERMES-xyz R 0\n", b"\x1eHERMES-abc E\n"],
    );
    assert_eq!(data, b"\x1eHERMES-xyz R 0\n");
    assert_eq!(seen, ["E"]);
    assert!(ended);
}

#[test]
fn job_scripts_quote_words_and_keep_the_tilde() {
    let job = Job {
        argv: &["bash", "-c", "echo 'a b' $HOME"],
        cwd: Path::new("~/my dir"),
        merge_stderr: true,
        vars: &[("PAGER", "cat"), ("bad name", "x")],
        unset: &["OPENAI_API_KEY".to_owned(), "$(boom)".to_owned()],
    };
    let script = job_script(&job).unwrap();
    assert!(
        script.starts_with(
            "{ ( unset OPENAI_API_KEY; export PAGER=cat; cd ~/'my dir' || exit 1; if [ \"$__bash\" = y ]; \
             then eval \" echo 'a b' \"'$HOME'; else exec bash -c \"echo 'a b' \"'$HOME'; \
             fi\n) </dev/null 2>&1 3>&- &"
        ),
        "{script}"
    );
    assert!(!script.contains("boom") && !script.contains("bad name"));
    // `$$` must name the command's own shell, not the launcher.
    let own_pid = job_script(&Job {
        argv: &["bash", "-c", "echo $$"],
        ..job
    })
    .unwrap();
    assert!(own_pid.contains("exec bash -c 'echo $$'") && !own_pid.contains("eval"));
}

struct Ran {
    ended: Option<Ended>,
    out: String,
    err: String,
}

async fn run_in(pool: &Launchers, argv: &[&str], cwd: &Path, merge: bool) -> Ran {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let job = Job {
        argv,
        cwd,
        merge_stderr: merge,
        vars: &[("HERMES_LAUNCHED", "yes")],
        unset: &[],
    };
    let ended = pool
        .run(
            &Local::default(),
            job,
            &mut |b| out.extend_from_slice(b),
            &mut |b| err.extend_from_slice(b),
        )
        .await
        .unwrap();
    Ran {
        ended,
        out: String::from_utf8_lossy(&out).into_owned(),
        err: String::from_utf8_lossy(&err).into_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_run_one_after_another_on_one_launcher() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Launchers::new();
    let sh = |script: &'static str| ["sh", "-c", script];
    let first = run_in(
        &pool,
        &sh("pwd; echo $HERMES_LAUNCHED; echo oops >&2; exit 3"),
        dir.path(),
        false,
    )
    .await;
    assert_eq!(first.ended, Some(Ended::Exited(3)));
    assert_eq!(
        first.out,
        format!("{}\nyes\n", dir.path().canonicalize().unwrap().display())
    );
    assert_eq!(first.err, "oops\n");
    // Output without a final newline, stderr merged, input closed.
    let second = run_in(
        &pool,
        &sh("printf abc; echo def >&2; cat; cd /; export GONE=1"),
        dir.path(),
        true,
    )
    .await;
    assert_eq!(second.ended, Some(Ended::Exited(0)));
    assert_eq!(second.out, "abcdef\n");
    assert_eq!(second.err, "");
    // Nothing a command did to its shell carries over.
    let third = run_in(&pool, &sh("pwd; echo ${GONE:-unset}"), dir.path(), false).await;
    assert!(third.out.ends_with("\nunset\n"), "{}", third.out);
    assert_eq!(pool.shared.live.load(Ordering::SeqCst), 1);
    // A missing directory is the command's failure, and said.
    let missing = run_in(&pool, &["true"], &dir.path().join("nope"), true).await;
    assert_eq!(missing.ended, Some(Ended::Exited(1)));
    assert!(missing.out.contains("nope"), "{}", missing.out);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_command_is_killed_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Launchers::new();
    let pidfile = dir.path().join("pid");
    let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    let argv = ["sh", "-c", script.as_str()];
    let cut = tokio::time::timeout(
        Duration::from_millis(500),
        run_in(&pool, &argv, dir.path(), false),
    )
    .await;
    assert!(cut.is_err());
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut gone = false;
    for _ in 0..100 {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting for its reaper.
        if state.is_empty() || state.split_whitespace().nth(2) == Some("Z") {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "the command's child outlived it");
    assert_eq!(pool.shared.live.load(Ordering::SeqCst), 0);
    let after = run_in(&pool, &["echo", "again"], dir.path(), false).await;
    assert_eq!(after.out, "again\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_launcher_is_reported_then_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Launchers::new();
    let died = run_in(
        &pool,
        &["sh", "-c", "echo before; kill -KILL $PPID; sleep 5"],
        dir.path(),
        true,
    )
    .await;
    assert!(
        matches!(died.ended, Some(Ended::LauncherDied(_))),
        "{:?}",
        died.ended
    );
    assert_eq!(died.out, "before\n");
    let next = run_in(&pool, &["echo", "fine"], dir.path(), false).await;
    assert_eq!(next.ended, Some(Ended::Exited(0)));
    assert_eq!(next.out, "fine\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_at_once_use_several_launchers_then_start_directly() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Launchers::new();
    let runs = (0..(MAX_LIVE + 2)).map(|_| run_in(&pool, &["sleep", "0.3"], dir.path(), false));
    let results = futures_join_all(runs).await;
    let served = results.iter().filter(|r| r.ended.is_some()).count();
    assert_eq!(served, MAX_LIVE);
    assert!(results.iter().all(|r| r.ended != Some(Ended::Exited(1))));
    // Only a few stay waiting for the next command.
    assert_eq!(pool.shared.live.load(Ordering::SeqCst), MAX_IDLE);
    assert_eq!(pool.shared.idle.lock().unwrap().len(), MAX_IDLE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_launchers_are_closed_after_a_while() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Launchers::new();
    let ran = run_in(&pool, &["true"], dir.path(), false).await;
    assert_eq!(ran.ended, Some(Ended::Exited(0)));
    assert_eq!(pool.shared.idle.lock().unwrap().len(), 1);
    assert!(close_stale(&pool.shared), "a fresh one stays");
    pool.shared.idle.lock().unwrap()[0].since = Instant::now() - IDLE_LIMIT;
    assert!(!close_stale(&pool.shared));
    assert_eq!(pool.shared.idle.lock().unwrap().len(), 0);
    assert_eq!(pool.shared.live.load(Ordering::SeqCst), 0);
    assert!(!pool.shared.sweeping.load(Ordering::SeqCst));
}

async fn futures_join_all<F: std::future::Future>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output> {
    let handles: Vec<_> = futures.map(Box::pin).collect();
    let mut out = Vec::new();
    let mut pending: Vec<_> = handles.into_iter().map(Some).collect();
    // Poll all together: a tiny join_all without another dependency.
    let mut results: Vec<Option<F::Output>> = (0..pending.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut all = true;
        for (i, slot) in pending.iter_mut().enumerate() {
            if let Some(f) = slot {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => {
                        results[i] = Some(v);
                        *slot = None;
                    }
                    std::task::Poll::Pending => all = false,
                }
            }
        }
        if all {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    out.extend(results.into_iter().flatten());
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_launcher_carries_a_hidden_variable() {
    // Cargo gives the test process this variable; a launcher inherits it.
    let name = "CARGO_MANIFEST_DIR";
    assert!(std::env::var_os(name).is_some());
    let dir = tempfile::tempdir().unwrap();
    // A launcher started for a job that hides nothing has it; a job that
    // hides it must not run there.
    let pool = Launchers::new();
    let first = run_in(
        &pool,
        &["sh", "-c", "echo ${CARGO_MANIFEST_DIR:+set}"],
        dir.path(),
        false,
    )
    .await;
    assert_eq!(first.out, "set\n");
    let hidden = [name.to_owned()];
    let job = Job {
        argv: &[
            "sh",
            "-c",
            "tr '\\0' '\\n' < /proc/$PPID/environ | grep -c '^CARGO_MANIFEST_DIR=' || true",
        ],
        cwd: dir.path(),
        merge_stderr: false,
        vars: &[],
        unset: &hidden,
    };
    let mut out = Vec::new();
    pool.run(
        &Local::default(),
        job,
        &mut |b| out.extend_from_slice(b),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out).trim(),
        "0",
        "the launcher itself lacks it"
    );
    // A pool made hiding it never starts a launcher with it.
    let pool = Launchers::hiding(hidden.to_vec());
    let probe = run_in(
        &pool,
        &[
            "sh",
            "-c",
            "tr '\\0' '\\n' < /proc/$PPID/environ | grep -c '^CARGO_MANIFEST_DIR=' || true",
        ],
        dir.path(),
        false,
    )
    .await;
    assert_eq!(probe.out.trim(), "0");
}
