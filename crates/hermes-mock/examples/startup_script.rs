//! The mock with the replies `crates/hermes-cli/layout/regenerate.sh`
//! needs, in order: a one-shot answer, a `terminal` call and the answer
//! after it, and two API-server chats. Prints the base URL, then serves
//! until killed.

#![allow(clippy::print_stdout)]

use hermes_mock::{MockServer, Reply};

fn main() {
    let mock = MockServer::start();
    mock.push_all([
        Reply::text("hello there"),
        Reply::tool_call("c1", "terminal", r#"{"command": "echo hi"}"#),
        Reply::text("done"),
        Reply::text("hello there"),
        Reply::text("hello there"),
    ]);
    println!("{}", mock.base_url());
    loop {
        std::thread::park();
    }
}
