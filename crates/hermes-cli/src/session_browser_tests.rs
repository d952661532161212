use hermes_state::session_db::SessionSummary;

use super::*;

fn row(id: &str, title: Option<&str>, preview: &str) -> SessionSummary {
    SessionSummary {
        id: id.into(),
        source: "cli".into(),
        model: None,
        title: title.map(str::to_owned),
        started_at: 1_800_000_000.0,
        ended_at: None,
        message_count: 4,
        preview: preview.into(),
        last_active: 1_800_000_000.0,
        parent_session_id: None,
    }
}

#[test]
fn filtering_matches_id_title_and_first_message() {
    let rows = vec![
        row("20261101_100000_aaaaaa", Some("Deploy fixes"), "ship it"),
        row("20261102_100000_bbbbbb", None, "Kubernetes rollout"),
    ];
    assert_eq!(matching(&rows, "").len(), 2);
    assert_eq!(matching(&rows, "DEPLOY")[0].id, rows[0].id);
    assert_eq!(matching(&rows, "kubern")[0].id, rows[1].id);
    assert_eq!(matching(&rows, "bbbbbb")[0].id, rows[1].id);
    assert!(matching(&rows, "nothing").is_empty());
}

#[test]
fn the_picker_marks_the_selection_and_scrolls() {
    let rows: Vec<SessionSummary> = (0..30)
        .map(|i| {
            row(
                &format!("20261101_1000{i:02}_abcdef"),
                None,
                &format!("task {i}"),
            )
        })
        .collect();
    let shown: Vec<&SessionSummary> = rows.iter().collect();
    let top = render(&shown, 30, "", 0, false);
    insta::assert_snapshot!("browse_top", top);
    let scrolled = render(&shown, 30, "task", 20, false);
    assert!(scrolled.contains("❯ 20261101_100020_abcdef"), "{scrolled}");
    assert!(
        !scrolled.contains("task 0\n"),
        "the window moved: {scrolled}"
    );
    assert_eq!(scrolled.lines().count(), 2 + VISIBLE);
    let none = render(&[], 30, "zzz", 0, false);
    assert!(none.ends_with("(nothing matches)"));
}
