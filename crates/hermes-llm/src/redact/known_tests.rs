use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD as B64, URL_SAFE_NO_PAD as B64URL};

use super::*;
use crate::redact::{RedactOptions, redact_with_known};

const PASSWORD: &str = "correct-horse-battery-staple-42";
const TOKEN: &str = "Zx9QwErTy8UiOp7AsDf";
const VENDOR: &str = "sk-proj-AbCdEf0123456789xyzXYZ";

fn known() -> KnownSecrets {
    KnownSecrets::new([PASSWORD, TOKEN, VENDOR])
}

fn strict(text: &str, known: &KnownSecrets) -> String {
    redact_with_known(text, RedactOptions::STRICT, Some(known))
}

fn gnu_base64(bytes: &[u8]) -> String {
    let flat = B64.encode(bytes);
    let lines: Vec<&str> = flat
        .as_bytes()
        .chunks(76)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    lines.join("\n") + "\n"
}

#[test]
fn an_exact_value_without_any_known_shape_is_masked() {
    let k = known();
    let out = strict(&format!("the password is {PASSWORD}, ok"), &k);
    assert_eq!(out, "the password is ***, ok");
    let out = redact_with_known(
        &format!("token {TOKEN}."),
        RedactOptions::FILE_READ,
        Some(&k),
    );
    assert_eq!(out, "token «redacted-secret».");
}

#[test]
fn a_vendor_shaped_known_value_keeps_its_usual_hint() {
    let out = strict(&format!("key {VENDOR} end"), &known());
    assert_eq!(out, "key sk-pro...zXYZ end");
}

#[test]
fn base64_at_every_alignment_and_in_both_alphabets_is_masked() {
    let k = known();
    for secret in [PASSWORD, TOKEN] {
        for lead in ["", "a", "ab", "abc"] {
            let plain = format!("{lead}{secret}!?");
            for encoded in [B64.encode(&plain), B64URL.encode(&plain)] {
                let out = strict(&format!("data: {encoded} end"), &k);
                assert!(!out.contains(&encoded), "{lead:?}: {out}");
                assert!(out.starts_with("data: ") && out.ends_with(" end"), "{out}");
            }
        }
    }
}

#[test]
fn the_wrapped_base64_of_a_whole_dotenv_file_is_masked() {
    let env_file = format!(
        "# comment line that makes the file longer than one wrapped line of output\n\
         OPENAI_BASE_URL=https://api.example.com/v1\nDB_PASSWORD={PASSWORD}\n\
         SESSION_SIGNING={TOKEN}\nPORT=8080\n"
    );
    let encoded = gnu_base64(env_file.as_bytes());
    assert!(encoded.lines().count() > 2);
    let out = strict(&format!("Here it is:\n{encoded}Done."), &known());
    for line in encoded.lines() {
        assert!(!out.contains(line), "{line} leaked: {out}");
    }
    assert!(
        out.starts_with("Here it is:\n") && out.ends_with("Done."),
        "{out}"
    );
}

#[test]
fn hex_in_both_cases_and_percent_encoding_are_masked() {
    let k = KnownSecrets::new(["p@ss word/with+specials"]);
    let hex: String = "p@ss word/with+specials"
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect();
    for text in [
        hex.clone(),
        hex.to_ascii_uppercase(),
        "p%40ss%20word%2Fwith%2Bspecials".to_owned(),
        "p%40ss%20word%2fwith%2bspecials".to_owned(),
        "p@ss+word%2Fwith%2Bspecials".to_owned(),
    ] {
        let out = strict(&format!("x {text} y"), &k);
        assert_eq!(out, "x *** y", "{text}");
    }
    // `xxd -p` wraps at 60 columns.
    let long = KnownSecrets::new([PASSWORD]);
    let dump: String = format!("prefix bytes for alignment {PASSWORD} and more after it")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect();
    let wrapped: Vec<&str> = dump
        .as_bytes()
        .chunks(60)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let out = strict(&wrapped.join("\n"), &long);
    assert_eq!(out, "***");
}

#[test]
fn values_that_cannot_be_secrets_are_not_known() {
    let k = KnownSecrets::new([
        "short",
        "12345678901",
        "3.14159265",
        "true",
        "https://api.example.com/v1",
        "/home/user/.hermes",
        "~/projects/x",
    ]);
    assert!(k.is_empty());
    let with_userinfo = KnownSecrets::new(["https://user:hunter22@example.com/"]);
    assert_eq!(with_userinfo.len(), 1);
}

#[test]
fn sources_skip_configuration_names_and_read_auth_credentials() {
    let auth = serde_json::json!({
        "version": 1,
        "credential_pool": {"openrouter": [{
            "id": "abc12345", "label": "my main key", "auth_type": "api_key",
            "access_token": "or-token-value-123456", "base_url": "https://openrouter.ai/api/v1",
            "last_status_at": "2025-01-01T00:00:00Z"
        }]},
        "providers": {"nous": {"refresh_token": "refresh-me-0123456789", "token_type": "bearer-type"}}
    });
    let k = KnownSecrets::from_sources(
        [
            ("HERMES_MODEL", "anthropic/claude-sonnet"),
            ("TERMINAL_ENV", "local-docker"),
            ("MY_DB_PASSWORD", "hunter2hunter2"),
            ("CUSTOM_THING", "opaque-value-9"),
        ],
        ["from-the-shell-0123"],
        Some(&auth),
    );
    let text = "anthropic/claude-sonnet local-docker hunter2hunter2 opaque-value-9 \
                from-the-shell-0123 or-token-value-123456 refresh-me-0123456789 my main key \
                bearer-type abc12345";
    assert_eq!(
        strict(text, &k),
        "anthropic/claude-sonnet local-docker *** *** *** *** *** my main key bearer-type abc12345"
    );
}

#[test]
fn configuration_names_are_told_from_credentials() {
    for name in [
        "OPENAI_BASE_URL",
        "HERMES_MODEL",
        "TELEGRAM_ALLOWED_USERS",
        "LOG_LEVEL",
    ] {
        assert!(is_config_name(name), "{name}");
    }
    for name in [
        "OPENAI_API_KEY",
        "DB_PASSWORD",
        "SESSION_URL",
        "CUSTOM",
        "MY_VALUE",
    ] {
        assert!(!is_config_name(name), "{name}");
    }
}

#[test]
fn text_without_secrets_is_unchanged_and_the_installed_set_is_used() {
    let k = known();
    let text = "plain words, a URL https://example.com/x and base64 aGVsbG8gd29ybGQ=";
    assert_eq!(strict(text, &k), text);
    assert_eq!(redact_with_known(text, RedactOptions::STRICT, None), text);
}
