//! The API server's bearer key through the binary: the configured key is
//! trimmed when read, the presented one compared exactly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::process::Stdio;

use support::gateway::{Gateway, KEY, http_try, wait_healthy};
use support::*;

#[test]
fn the_key_is_compared_exactly_and_the_setting_is_trimmed() {
    let sb = Sandbox::start();
    let port = free_port();
    sb.no_retries();
    sb.add_config(&format!(
        "platforms:\n  api_server:\n    enabled: true\n    extra:\n      port: {port}\n"
    ));
    // A key pasted with stray blanks around it still works once trimmed.
    let child = sb
        .command()
        .args(["gateway", "run"])
        .env("API_SERVER_KEY", format!("  {KEY} \t"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let gw = Gateway { child, port };
    wait_healthy(port);
    let status = |value: &str| {
        http_try(
            gw.port,
            "GET",
            "/v1/models",
            &[("Authorization", value)],
            "",
        )
        .unwrap()
        .0
    };
    assert_eq!(status(&format!("Bearer {KEY}")), 200);
    for wrong in [
        format!("Bearer  {KEY}"),
        format!("Bearer \t{KEY}"),
        format!("Bearer {KEY}\t{KEY}"),
        format!("Bearer {KEY} x"),
        format!("Bearer {}", &KEY[..KEY.len() - 1]),
        format!("Bearer {KEY}0"),
        format!("Basic {KEY}"),
        KEY.to_owned(),
    ] {
        assert_eq!(status(&wrong), 401, "{wrong:?}");
    }
}
