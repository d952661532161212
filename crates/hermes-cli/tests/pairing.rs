//! `hermes pairing approve` through the binary: a failure exits non-zero
//! with its reason on stderr, and wrong codes never lock the owner out.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_gateway::messaging::pairing::PairingStore;
use support::*;

#[test]
fn a_wrong_code_fails_with_a_message_and_a_non_zero_exit() {
    let sb = Sandbox::start();
    let wrong = sb.run(&["pairing", "approve", "telegram", "zzzzzzzz"]);
    assert_eq!(wrong.status.code(), Some(1), "{}", stdout(&wrong));
    assert!(
        stderr(&wrong).contains("Code 'ZZZZZZZZ' not found or expired for platform 'telegram'."),
        "{}",
        stderr(&wrong)
    );
    assert!(stdout(&wrong).is_empty(), "{}", stdout(&wrong));
}

#[test]
fn many_wrong_codes_do_not_lock_the_owner_out_or_stop_strangers_pairing() {
    let sb = Sandbox::start();
    // A stranger's DM would do this inside the gateway.
    let store = PairingStore::new(sb.home.path());
    let code = store
        .issue_code("telegram", "4242", "Ann")
        .unwrap()
        .unwrap();
    for _ in 0..6 {
        let wrong = sb.run(&["pairing", "approve", "telegram", "AAAAAAAA"]);
        assert_eq!(wrong.status.code(), Some(1));
        assert!(
            stderr(&wrong).contains("not found or expired"),
            "{}",
            stderr(&wrong)
        );
    }
    assert!(
        store
            .issue_code("telegram", "5151", "Bo")
            .unwrap()
            .is_some(),
        "strangers still get codes"
    );
    let right = sb.run(&["pairing", "approve", "telegram", &code]);
    assert!(right.status.success(), "{}", stderr(&right));
    assert!(
        stdout(&right).contains("Approved! User Ann (4242) on telegram can now use the bot~"),
        "{}",
        stdout(&right)
    );
    assert!(store.is_approved("telegram", "4242"));
}
