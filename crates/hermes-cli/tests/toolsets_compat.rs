//! A Hermes user's toolset names keep working: every toolset the reference
//! knows is accepted (built or not), and unknown names are a warning, never a
//! refusal to start.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::{Sandbox, fixture, stderr, stdout, tool_names};

#[test]
fn a_reference_config_naming_every_toolset_answers_without_warnings() {
    let sb = Sandbox::start();
    let text = std::fs::read_to_string(fixture("reference_config_all_toolsets.yaml")).unwrap();
    std::fs::write(
        sb.home.path().join("config.yaml"),
        text.replace("MOCK_BASE_URL", &sb.mock.base_url()),
    )
    .unwrap();
    sb.mock.push(Reply::text("all set"));
    let out = sb.chat("hi", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "all set");
    assert!(
        !stderr(&out).contains("Unknown toolsets"),
        "{}",
        stderr(&out)
    );
    let names = tool_names(&sb.requests()[0]);
    for tool in ["terminal", "read_file", "memory", "todo", "delegate_task"] {
        assert!(
            names.iter().any(|n| n == tool),
            "{tool} missing from {names:?}"
        );
    }
}

#[test]
fn unknown_toolsets_are_named_in_a_warning_and_the_rest_apply() {
    let sb = Sandbox::start();
    sb.add_config("toolsets:\n  - hermes-cli\n  - browser\n  - no-such-set\n");
    sb.mock.push(Reply::text("fine"));
    let out = sb.chat("hi", &["-t", "file,vision,bogus-one"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "fine");
    let err = stderr(&out);
    assert!(err.contains("Unknown toolsets: bogus-one"), "{err}");
    // `-t` replaces the config's list, so its unknown name is not reported.
    assert!(!err.contains("no-such-set"), "{err}");
    // Only what `-t` selected (and is built) is offered.
    let names = tool_names(&sb.requests()[0]);
    assert!(names.iter().any(|n| n == "read_file"), "{names:?}");
    assert!(!names.iter().any(|n| n == "terminal"), "{names:?}");

    // From config.yaml alone.
    sb.mock.push(Reply::text("still fine"));
    let out = sb.chat("hi", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Unknown toolsets: no-such-set"),
        "{}",
        stderr(&out)
    );
    assert!(
        tool_names(&sb.requests()[1])
            .iter()
            .any(|n| n == "terminal")
    );
}
