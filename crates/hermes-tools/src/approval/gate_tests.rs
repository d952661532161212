use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;

use super::gate::persist_allowlist;
use super::*;

/// Answers every request with a fixed choice and counts the questions.
struct Fixed(ApprovalChoice, AtomicUsize);

impl Approver for Fixed {
    fn ask<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalChoice> {
        self.1.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move { self.0 })
    }
}

fn asker(choice: ApprovalChoice) -> (Arc<Fixed>, Presence) {
    let a = Arc::new(Fixed(choice, AtomicUsize::new(0)));
    (a.clone(), Presence::Interactive(a))
}

fn refused(d: &Decision) -> serde_json::Value {
    match d {
        Decision::Refuse { result, .. } => serde_json::from_str(result).unwrap(),
        Decision::Allow { .. } => panic!("expected a refusal, got {d:?}"),
    }
}

#[tokio::test]
async fn safe_commands_pass_without_asking() {
    let (a, p) = asker(ApprovalChoice::Deny);
    let gate = ApprovalGate::new(ApprovalMode::Manual, p);
    assert_eq!(gate.check("ls -la").await, Decision::Allow { note: None });
    assert_eq!(a.1.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn hardline_is_refused_even_when_off_and_never_asks() {
    let (a, p) = asker(ApprovalChoice::Always);
    let gate = ApprovalGate::new(ApprovalMode::Off, p);
    let v = refused(&gate.check("sudo rm -rf /").await);
    assert_eq!(v["hardline"], true);
    assert_eq!(v["status"], "blocked");
    assert_eq!(v["command"], "sudo rm -rf /");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("recursive delete of root filesystem")
    );
    assert_eq!(a.1.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn non_interactive_refuses_dangerous_at_once_with_a_way_out() {
    let gate = ApprovalGate::new(ApprovalMode::Manual, Presence::NonInteractive);
    let d = gate.check("git push --force").await;
    let Decision::Refuse { status, .. } = &d else {
        panic!()
    };
    assert!(status.contains("git force push"));
    let v = refused(&d);
    let msg = v["error"].as_str().unwrap();
    assert!(
        msg.contains("--yolo") && msg.contains("command_allowlist"),
        "{msg}"
    );
    assert_eq!(v["hardline"], false);
}

#[tokio::test]
async fn off_mode_runs_dangerous() {
    let gate = ApprovalGate::new(ApprovalMode::Off, Presence::NonInteractive);
    assert_eq!(
        gate.check("rm -rf ./build").await,
        Decision::Allow { note: None }
    );
}

#[tokio::test]
async fn subagents_deny() {
    let parent = ApprovalGate::new(ApprovalMode::Manual, asker(ApprovalChoice::Once).1);
    let v = refused(&parent.for_subagent().check("rm -rf build").await);
    assert!(v["error"].as_str().unwrap().contains("subagent"));
}

#[tokio::test]
async fn once_session_and_deny() {
    let (a, p) = asker(ApprovalChoice::Once);
    let gate = ApprovalGate::new(ApprovalMode::Manual, p);
    assert!(matches!(
        gate.check("rm -rf build").await,
        Decision::Allow { note: Some(_) }
    ));
    assert!(matches!(
        gate.check("rm -rf build").await,
        Decision::Allow { note: Some(_) }
    ));
    assert_eq!(a.1.load(Ordering::SeqCst), 2, "once asks every time");

    let (a, p) = asker(ApprovalChoice::Session);
    let gate = ApprovalGate::new(ApprovalMode::Manual, p);
    assert!(matches!(
        gate.check("rm -rf a").await,
        Decision::Allow { .. }
    ));
    assert!(matches!(
        gate.check("rm -rf b").await,
        Decision::Allow { note: None }
    ));
    assert_eq!(
        a.1.load(Ordering::SeqCst),
        1,
        "session remembers the reason"
    );

    let gate = ApprovalGate::new(ApprovalMode::Manual, asker(ApprovalChoice::Deny).1);
    let v = refused(&gate.check("git reset --hard").await);
    assert!(v["error"].as_str().unwrap().contains("denied"));
}

#[tokio::test]
async fn always_persists_to_config_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, "model:\n  default: x\n").unwrap();
    let gate = ApprovalGate::new(ApprovalMode::Manual, asker(ApprovalChoice::Always).1)
        .with_allowlist(Vec::new(), Some(path.clone()));
    assert!(matches!(
        gate.check("git clean -fd").await,
        Decision::Allow { .. }
    ));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("model:\n  default: x\n"));
    assert!(
        text.contains("command_allowlist:\n  - \"git clean with force (deletes untracked files)\"")
    );

    // A later session with the loaded list runs it without anyone to ask.
    let gate = ApprovalGate::new(ApprovalMode::Manual, Presence::NonInteractive).with_allowlist(
        vec!["git clean with force (deletes untracked files)".into()],
        None,
    );
    assert_eq!(
        gate.check("git clean -fd").await,
        Decision::Allow { note: None }
    );
}

#[test]
fn persist_handles_flow_and_block_lists() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, "command_allowlist: []\nother: 1\n").unwrap();
    persist_allowlist(&path, "a").unwrap();
    persist_allowlist(&path, "b").unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "command_allowlist:\n  - \"b\"\n  - \"a\"\nother: 1\n"
    );
}

#[tokio::test]
async fn command_globs_allow_only_simple_commands() {
    let gate = ApprovalGate::new(ApprovalMode::Manual, Presence::NonInteractive)
        .with_allowlist(vec!["rm -rf ./build*".into()], None);
    assert!(matches!(
        gate.check("rm -rf ./build").await,
        Decision::Allow { .. }
    ));
    assert!(matches!(
        gate.check("rm -rf ./build; rm -rf ./src").await,
        Decision::Refuse { .. }
    ));
}

#[test]
fn mode_from_config() {
    use serde_json::json;
    assert_eq!(mode_of(json!("off")), ApprovalMode::Off);
    assert_eq!(mode_of(json!(false)), ApprovalMode::Off);
    assert_eq!(mode_of(json!("smart")), ApprovalMode::Manual);
    assert_eq!(
        ApprovalMode::from_section(&Default::default()),
        ApprovalMode::Manual
    );
    let _unused: Mutex<()> = Mutex::new(());
}

#[tokio::test]
async fn yolo_can_be_toggled_mid_session() {
    let gate = ApprovalGate::new(ApprovalMode::Manual, Presence::NonInteractive);
    assert!(matches!(
        gate.check("rm -rf build").await,
        Decision::Refuse { .. }
    ));
    gate.set_mode(ApprovalMode::Off);
    assert_eq!(
        gate.check("rm -rf build").await,
        Decision::Allow { note: None }
    );
    assert!(matches!(
        gate.check("rm -rf /").await,
        Decision::Refuse { .. }
    ));
}

#[tokio::test]
async fn user_deny_rules_beat_yolo() {
    let gate = ApprovalGate::new(ApprovalMode::Off, Presence::NonInteractive)
        .with_deny(vec!["terraform destroy*".into()]);
    let v = refused(&gate.check("Terraform destroy -auto-approve").await);
    assert!(v["error"].as_str().unwrap().contains("approvals.deny"));
    assert_eq!(
        gate.check("terraform plan").await,
        Decision::Allow { note: None }
    );
}

/// Never answers, like a person who walked away.
struct Silent;

impl Approver for Silent {
    fn ask<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalChoice> {
        Box::pin(futures_util::future::pending())
    }
}

#[tokio::test(start_paused = true)]
async fn unanswered_prompt_denies_after_the_timeout() {
    let gate = ApprovalGate::new(
        ApprovalMode::Manual,
        Presence::Interactive(Arc::new(Silent)),
    )
    .with_timeout(std::time::Duration::from_secs(5));
    let v = refused(&gate.check("rm -rf build").await);
    assert!(v["error"].as_str().unwrap().contains("denied"));
}

/// The mode `approvals: {mode: VALUE}` in config.yaml gives.
fn mode_of(value: serde_json::Value) -> ApprovalMode {
    let sections = hermes_state::settings::Sections::from_tree(
        &serde_json::json!({"approvals": {"mode": value}}),
    );
    ApprovalMode::from_section(&sections.approvals)
}
