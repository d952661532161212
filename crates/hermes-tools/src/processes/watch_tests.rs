use super::*;

fn watch(patterns: &[&str]) -> Watch {
    let patterns: Vec<String> = patterns.iter().map(|p| (*p).to_owned()).collect();
    Watch::new(&patterns)
}

fn matched(pattern: &str, output: &str, suppressed: usize) -> Option<Event> {
    Some(Event::Matched {
        pattern: pattern.into(),
        output: output.into(),
        suppressed,
    })
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

#[test]
fn matching_lines_are_quoted_with_the_first_pattern_found() {
    let mut w = watch(&["ready", "ERROR"]);
    let t = Instant::now();
    assert_eq!(w.scan("starting up\nloading\n", t), None);
    assert_eq!(
        w.scan(
            "ERROR: port busy  \nServer ready on :8000\r\nERROR ready\n",
            t
        ),
        matched(
            "ERROR",
            "ERROR: port busy\nServer ready on :8000\nERROR ready",
            0
        )
    );
    assert_eq!(w.hits(), 1);
}

#[test]
fn a_line_split_across_reads_matches_once() {
    let mut w = watch(&["ready"]);
    let t = Instant::now();
    assert_eq!(w.scan("Server rea", t), None);
    assert_eq!(
        w.scan("dy on :80", t),
        matched("ready", "Server ready on :80", 0)
    );
    // The rest of that line does not count again, even after the cooldown.
    assert_eq!(w.scan("00\nidle\n", t + secs(20)), None);
    assert_eq!(
        w.scan("ready again\n", t + secs(20)),
        matched("ready", "ready again", 0)
    );
}

#[test]
fn empty_patterns_are_dropped() {
    let mut w = watch(&["", "x"]);
    assert_eq!(w.patterns(), ["x"]);
    assert_eq!(w.scan("abc\n", Instant::now()), None);
    let mut none = watch(&[""]);
    assert!(none.patterns().is_empty());
    assert_eq!(none.scan("anything\n", Instant::now()), None);
}

#[test]
fn matches_inside_the_cooldown_are_counted_and_reported_with_the_next() {
    let mut w = watch(&["hit"]);
    let t = Instant::now();
    assert_eq!(w.scan("hit 1\n", t), matched("hit", "hit 1", 0));
    assert_eq!(w.scan("hit 2\nhit 3\n", t + secs(1)), None);
    assert_eq!(w.scan("hit 4\n", t + secs(14)), None);
    assert_eq!(w.scan("hit 5\n", t + secs(15)), matched("hit", "hit 5", 3));
}

#[test]
fn three_crowded_windows_in_a_row_turn_watching_off() {
    let mut w = watch(&["tick"]);
    let t = Instant::now();
    assert!(w.scan("tick\n", t).is_some());
    assert_eq!(w.scan("tick\n", t + secs(1)), None);
    assert!(w.scan("tick\n", t + secs(16)).is_some());
    assert_eq!(w.scan("tick\n", t + secs(17)), None);
    assert!(w.scan("tick\n", t + secs(32)).is_some());
    assert_eq!(w.scan("tick\n", t + secs(33)), Some(Event::Disabled));
    assert!(w.patterns().is_empty());
    assert_eq!(w.scan("tick\n", t + secs(100)), None);
}

#[test]
fn a_quiet_window_resets_the_strikes() {
    let mut w = watch(&["tick"]);
    let t = Instant::now();
    assert!(w.scan("tick\n", t).is_some());
    assert_eq!(w.scan("tick\n", t + secs(1)), None); // strike 1
    assert!(w.scan("tick\n", t + secs(16)).is_some());
    assert_eq!(w.scan("tick\n", t + secs(17)), None); // strike 2
    assert!(w.scan("tick\n", t + secs(32)).is_some());
    // No drop in this window: the next emission starts the count again.
    assert!(w.scan("tick\n", t + secs(48)).is_some());
    assert_eq!(w.scan("tick\n", t + secs(49)), None); // strike 1
    assert!(w.scan("tick\n", t + secs(64)).is_some());
    assert_eq!(w.scan("tick\n", t + secs(65)), None); // strike 2
    assert!(!w.patterns().is_empty());
}

#[test]
fn quoted_output_is_bounded() {
    let mut w = watch(&["m"]);
    let t = Instant::now();
    let many: String = (0..25).map(|i| format!("m{i}\n")).collect();
    let Some(Event::Matched { output, .. }) = w.scan(&many, t) else {
        panic!("no match");
    };
    assert_eq!(output.lines().count(), 20);
    assert!(output.ends_with("m19"));
    let long = format!("m{}\n", "x".repeat(3000));
    let Some(Event::Matched { output, .. }) = w.scan(&long, t + secs(20)) else {
        panic!("no match");
    };
    assert_eq!(output.chars().count(), 2000 + "\n...(truncated)".len());
    assert!(output.ends_with("x\n...(truncated)"));
}

#[test]
fn the_breaker_trips_past_fifteen_in_ten_seconds_and_says_when_it_releases() {
    let mut b = Breaker::default();
    let mut notes = Vec::new();
    let t = Instant::now();
    for _ in 0..15 {
        assert!(b.admit(t, &mut notes));
    }
    assert!(notes.is_empty());
    assert!(!b.admit(t + secs(1), &mut notes));
    assert_eq!(
        notes,
        [
            "[IMPORTANT: Watch-pattern overflow: >15 notifications in 10s across all processes. \
          Suppressing further watch_match events for 30s.]"
        ]
    );
    notes.clear();
    assert!(!b.admit(t + secs(20), &mut notes));
    assert!(notes.is_empty());
    assert!(b.admit(t + secs(31), &mut notes));
    assert_eq!(
        notes,
        [
            "[IMPORTANT: Watch-pattern notifications resumed. 2 match event(s) were suppressed \
          during the flood.]"
        ]
    );
    // A new window after ten seconds admits fifteen again.
    let mut b = Breaker::default();
    for i in 0..30 {
        assert!(b.admit(t + secs(i / 15 * 10), &mut notes), "{i}");
    }
}

#[test]
fn notes_have_the_reference_wording() {
    assert_eq!(
        match_note("proc_1", "npm run dev", "ready", "ready in 3s", 0),
        "[IMPORTANT: Background process proc_1 matched watch pattern \"ready\".\n\
         Command: npm run dev\nMatched output:\nready in 3s]"
    );
    assert_eq!(
        match_note("proc_1", "c", "p", "p", 4),
        "[IMPORTANT: Background process proc_1 matched watch pattern \"p\".\nCommand: c\n\
         Matched output:\np\n(4 earlier matches were suppressed by rate limit)]"
    );
    assert_eq!(
        disabled_note("proc_1"),
        "[IMPORTANT: Watch patterns disabled for process proc_1 — 3 consecutive rate-limit \
         windows triggered (min spacing 15s). Falling back to notify_on_complete semantics; \
         you'll get exactly one notification when the process exits.]"
    );
}

#[test]
fn the_inbox_keeps_notes_in_order_until_taken() {
    let inbox = Inbox::default();
    let t = Instant::now();
    inbox.deliver("proc_a", "a", matched("x", "x1", 0).unwrap(), t);
    inbox.deliver("proc_b", "b", Event::Disabled, t);
    let notes = inbox.take();
    assert_eq!(notes.len(), 2);
    assert!(notes[0].contains("proc_a matched watch pattern \"x\""));
    assert!(notes[1].contains("disabled for process proc_b"));
    assert!(inbox.take().is_empty());
}
