//! The browser tools through the binary, driving Debian's headless Chromium
//! (`.ci/run` installs it) against pages on loopback: a scripted model fills
//! in a form, submits it, reads the result page, and looks at a screenshot.
//! Skipped, with a message, where no Chromium is installed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::web::{LoopbackWeb, Page};
use support::*;

const FORM: &str = r#"<!doctype html><html><head><title>Sign up</title></head><body>
<h1>Sign up</h1>
<form action="/hello" method="get"><label for="n">Name</label> <input id="n" name="name" required>
<button type="submit">Send</button></form>
<img src="/logo.png" alt="Company logo" width="10" height="10">
<script>console.log("form ready"); setTimeout(() => { throw new Error("late failure"); }, 0);</script>
</body></html>"#;

const HELLO: &str = r#"<!doctype html><html><head><title>Welcome</title></head><body>
<main><h1>Welcome</h1><p id="out">…</p><a href="/form.html">Back to the form</a></main>
<script>document.getElementById('out').textContent = 'Hello, ' + new URLSearchParams(location.search).get('name') + '!';</script>
</body></html>"#;

fn chromium() -> bool {
    let found = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|d| {
            ["chromium", "chromium-browser", "google-chrome"]
                .iter()
                .any(|n| d.join(n).is_file())
        })
    });
    if !found {
        eprintln!("skipped: no Chromium on PATH (Debian: apt install chromium)");
    }
    found
}

fn results(body: &Value) -> Vec<Value> {
    messages_with_role(body, "tool")
        .iter()
        .map(|m| {
            serde_json::from_str(m["content"].as_str().unwrap_or("null")).unwrap_or(Value::Null)
        })
        .collect()
}

#[test]
fn the_model_fills_in_a_form_submits_it_and_reads_the_result() {
    if !chromium() {
        return;
    }
    let web = LoopbackWeb::start();
    web.put("/form.html", Page::ok("text/html", FORM));
    web.put("/hello", Page::ok("text/html", HELLO));
    let sb = Sandbox::start();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "browser_navigate",
            &json!({"url": web.url("/form.html")}).to_string(),
        ),
        Reply::tool_call(
            "c2",
            "browser_type",
            &json!({"ref": "@e2", "text": "Ada"}).to_string(),
        ),
        Reply::tool_call("c3", "browser_click", &json!({"ref": "@e3"}).to_string()),
        Reply::tool_call("c4", "browser_snapshot", &json!({"full": true}).to_string()),
        Reply::tool_call(
            "c5",
            "browser_vision",
            &json!({"question": "What does the page say?"}).to_string(),
        ),
        Reply::text("The page greets Ada."),
        Reply::tool_call("c6", "browser_back", "{}"),
        Reply::tool_call("c7", "browser_console", "{}"),
        Reply::tool_call("c8", "browser_get_images", "{}"),
        Reply::tool_call(
            "c9",
            "browser_console",
            &json!({"expression": "document.querySelectorAll('input').length"}).to_string(),
        ),
        Reply::text("It says Hello, Ada!"),
    ]);
    let out = sb.chat("sign me up as Ada", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("It says Hello, Ada!"));
    let requests = sb.mock.chat_requests();
    assert_eq!(
        requests.len(),
        11,
        "ten turns of the main model and one look"
    );
    assert!(tool_names(&requests[0]).contains(&"browser_navigate".to_owned()));
    let last = results(&requests[10]);
    // Navigating came back with a compact snapshot and refs to act on.
    let nav = &last[0];
    assert_eq!(nav["success"], true, "{nav}");
    assert_eq!(nav["title"], "Sign up");
    let snap = nav["snapshot"].as_str().unwrap();
    assert!(
        snap.contains(r#"- heading "Sign up" [level=1, ref=e1]"#),
        "{snap}"
    );
    assert!(
        snap.contains(r#"textbox "Name" [required, ref=e2]"#),
        "{snap}"
    );
    assert!(snap.contains(r#"button "Send" [ref=e3]"#), "{snap}");
    assert_eq!(
        last[1],
        json!({"success": true, "typed": "Ada", "element": "@e2"})
    );
    assert_eq!(last[2], json!({"success": true, "clicked": "@e3"}));
    // The form was submitted and the result page's script ran.
    let after = last[3]["snapshot"].as_str().unwrap();
    assert!(after.contains("Hello, Ada!"), "{after}");
    assert!(
        web.hits
            .lock()
            .unwrap()
            .iter()
            .any(|h| h == "/hello?name=Ada")
    );
    // The screenshot went to the vision model (the session's own here).
    let look = &requests[5];
    let parts = look["messages"][0]["content"].as_array().unwrap();
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("You are analyzing a screenshot of a web browser.")
    );
    assert!(
        parts[1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    let vision = &last[4];
    assert_eq!(vision["analysis"], "The page greets Ada.");
    assert!(std::path::Path::new(vision["screenshot_path"].as_str().unwrap()).is_file());
    // Back on the form: what it logged, its images, a value from its DOM.
    assert!(last[5]["url"].as_str().unwrap().ends_with("/form.html"));
    let console = &last[6];
    assert!(
        console["console_messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["text"] == "form ready"),
        "{console}"
    );
    assert!(
        console["js_errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("late failure"),
        "{console}"
    );
    let images = &last[7];
    assert_eq!(images["count"], 1, "{images}");
    assert_eq!(images["images"][0]["alt"], "Company logo");
    assert_eq!(
        last[8],
        json!({"success": true, "result": 1, "result_type": "int"})
    );
}

#[test]
fn a_metadata_address_and_an_unknown_ref_are_refused() {
    if !chromium() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "browser_navigate",
            &json!({"url": "http://169.254.169.254/latest/meta-data/"}).to_string(),
        ),
        Reply::tool_call("c2", "browser_click", &json!({"ref": "@e9"}).to_string()),
        Reply::text("done"),
    ]);
    let out = sb.chat("go", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let last = results(&sb.mock.chat_requests()[2]);
    assert_eq!(
        last[0],
        json!({"success": false, "error": "Blocked: URL targets a cloud metadata endpoint"})
    );
    assert!(
        last[1]["error"]
            .as_str()
            .unwrap()
            .starts_with("Unknown ref: e9"),
        "{}",
        last[1]
    );
}

#[test]
fn a_redirect_to_a_metadata_address_is_refused_by_the_browsers_proxy() {
    if !chromium() {
        return;
    }
    // Chromium follows redirects itself; its proxy refuses the hop before
    // any connection to the metadata address is tried.
    let web = LoopbackWeb::start();
    web.put(
        "/go",
        Page::redirect("http://169.254.169.254/latest/meta-data/"),
    );
    web.put("/form.html", Page::ok("text/html", FORM));
    let sb = Sandbox::start();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "browser_navigate",
            &json!({"url": web.url("/go")}).to_string(),
        ),
        Reply::tool_call(
            "c2",
            "browser_navigate",
            &json!({"url": web.url("/form.html")}).to_string(),
        ),
        Reply::text("done"),
    ]);
    let out = sb.chat("go", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let last = results(&sb.mock.chat_requests()[2]);
    assert_eq!(last[0]["success"], false, "{}", last[0]);
    let error = last[0]["error"].as_str().unwrap();
    assert!(
        error.starts_with("Blocked:")
            && error.contains("169.254.169.254 (169.254.169.254) is a cloud metadata endpoint"),
        "{error}"
    );
    // The same browser, through the same proxy, still loads loopback pages.
    assert_eq!(last[1]["success"], true, "{}", last[1]);
    assert_eq!(last[1]["title"], "Sign up");
}

#[test]
fn private_pages_are_refused_when_allow_private_urls_is_false() {
    if !chromium() {
        return;
    }
    let web = LoopbackWeb::start();
    web.put("/form.html", Page::ok("text/html", FORM));
    let sb = Sandbox::start();
    sb.add_config("security:\n  allow_private_urls: false\n");
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "browser_navigate",
            &json!({"url": web.url("/form.html")}).to_string(),
        ),
        Reply::text("done"),
    ]);
    let out = sb.chat("go", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let last = results(&sb.mock.chat_requests()[1]);
    let error = last[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("Blocked:")
            && error.contains("resolves to the private/internal address 127.0.0.1"),
        "{}",
        last[0]
    );
    assert!(web.hits.lock().unwrap().is_empty());
}
