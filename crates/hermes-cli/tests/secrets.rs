//! Secrets planted where a real session meets them — a file the model reads,
//! the user's shell environment, the model's own answer — never reach the
//! provider, state.db, `sessions export` or the logs in clear, and the lines
//! around them survive.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;

use hermes_mock::Reply;
use support::*;

const FILE_KEY: &str = "ghp_PlantedInNotes0123456789abcdefghij";
const DOTENV_PASSWORD: &str = "correct-horse-battery-staple-42";
const SHELL_KEY: &str = "sk-or-v1-plantedintheshell0123456789abcdef";
const SHELL_TOKEN: &str = "123456789:AAplantedTelegramTokenValue_0123456";
const ANSWER_KEY: &str = "sk-ant-api03-repeatedbythemodel0123456789";

/// Every file under `dir`, as bytes.
fn all_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(all_files(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path.display().to_string(), bytes));
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

fn base64(s: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in s.as_bytes().chunks(3) {
        let n =
            chunk.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

#[test]
fn planted_secrets_stay_out_of_requests_storage_exports_and_logs() {
    let sb = Sandbox::start();
    write(
        sb.work.path(),
        "notes.txt",
        &format!("line before\ngithub: {FILE_KEY}\nline after\n"),
    );
    write(
        sb.work.path(),
        "deploy.env",
        &format!("DB_HOST=db.internal\nDB_PASSWORD={DOTENV_PASSWORD}\nPORT=8080\n"),
    );
    sb.mock.push_all([
        Reply::tool_call("c1", "read_file", r#"{"path":"notes.txt"}"#),
        Reply::tool_call("c2", "read_file", r#"{"path":"deploy.env"}"#),
        Reply::tool_call(
            "c3",
            "terminal",
            r#"{"command":"printf %s \"$OPENROUTER_API_KEY\" | base64; echo \"tg=[$TELEGRAM_BOT_TOKEN]\"; echo done"}"#,
        ),
        Reply::tool_call(
            "c4",
            "execute_code",
            r#"{"code":"import os\nprint('key=[' + os.environ.get('OPENROUTER_API_KEY', '') + ']')"}"#,
        ),
        Reply::text(format!(
            "I found the GitHub token. Also, your Anthropic key is {ANSWER_KEY} — keep it safe."
        )),
    ]);
    let out = sb
        .command()
        .args(["chat", "-q", "audit my secrets", "-Q", "--yolo"])
        .env("OPENROUTER_API_KEY", SHELL_KEY)
        .env("TELEGRAM_BOT_TOKEN", SHELL_TOKEN)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let id = session_id_of(&out);

    let secrets = [
        FILE_KEY.to_owned(),
        DOTENV_PASSWORD.to_owned(),
        SHELL_KEY.to_owned(),
        base64(SHELL_KEY),
        SHELL_TOKEN.to_owned(),
        ANSWER_KEY.to_owned(),
    ];

    // What the provider saw.
    let requests = sb.requests();
    assert_eq!(requests.len(), 5);
    let sent: String = requests.iter().map(|r| r.to_string()).collect();
    for secret in &secrets {
        assert!(!sent.contains(secret.as_str()), "provider saw {secret}");
    }
    // The lines around the secrets survived, and the shell saw no key at all.
    let last = requests.last().unwrap();
    let tools = messages_with_role(last, "tool");
    let notes = tool_content(tools[0])["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        notes.contains("line before") && notes.contains("line after"),
        "{notes}"
    );
    assert!(notes.contains("«redacted:ghp_…»"), "{notes}");
    let dotenv = tool_content(tools[1])["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        dotenv.contains("DB_HOST=db.internal") && dotenv.contains("PORT=8080"),
        "{dotenv}"
    );
    let shell = tool_content(tools[2])["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(shell.contains("tg=[]") && shell.contains("done"), "{shell}");
    let script = tool_content(tools[3]).to_string();
    assert!(script.contains("key=[]"), "{script}");
    // The answer kept its words, not the key.
    let answer = stdout(&out);
    assert!(answer.contains("keep it safe"), "{answer}");
    assert!(!answer.contains(ANSWER_KEY), "{answer}");

    // state.db (with its WAL), every log, and the export.
    let export = sb
        .command()
        .args(["sessions", "export", "-"])
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", stderr(&export));
    let exported = stdout(&export);
    assert!(exported.contains(&id) && exported.contains("keep it safe"));
    let mut stored = all_files(sb.home.path());
    stored.push(("export".into(), export.stdout.clone()));
    for (name, bytes) in &stored {
        for secret in &secrets {
            assert!(!contains(bytes, secret), "{name} holds {secret}");
        }
    }
}
