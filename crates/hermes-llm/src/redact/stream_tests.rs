use std::sync::{Arc, LazyLock};
use std::time::Instant;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

use super::*;
use crate::redact::{KnownSecrets, RedactOptions, redact_with_known};

const VENDOR: &str = "sk-ant-api03-repeatedbythemodel0123456789";
const PLAIN: &str = "correct-horse-battery-staple-42";
const SPACED: &str = "open sesame now 1234";

fn known() -> Option<Arc<KnownSecrets>> {
    static KNOWN: LazyLock<Arc<KnownSecrets>> =
        LazyLock::new(|| Arc::new(KnownSecrets::new([VENDOR, PLAIN, SPACED])));
    Some(KNOWN.clone())
}

/// What the stream yields for `chunks`, concatenated.
fn streamed(chunks: &[&str], options: RedactOptions) -> String {
    let mut r = StreamRedactor::with_known(options, known());
    let mut out = String::new();
    for chunk in chunks {
        out.push_str(&r.push(chunk));
    }
    out.push_str(&r.finish());
    out
}

fn whole(text: &str, options: RedactOptions) -> String {
    redact_with_known(text, options, known().as_deref())
}

fn texts() -> Vec<String> {
    vec![
        format!("Your key is {VENDOR} — keep it safe."),
        format!("The .env says DB_PASSWORD={PLAIN}\nand that is all."),
        format!("base64: {} end", B64.encode(PLAIN)),
        format!("say '{SPACED}' to enter"),
        "Authorization: Basic dXNlcjpwYXNzd29yZA== then more".to_owned(),
        "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz' x".to_owned(),
        "db postgres://admin:s3cretpass@db.internal:5432/app ok".to_owned(),
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----\nafter"
            .to_owned(),
        "tg 123456789:AAHfakeTelegramTokenValue_0123456789x ok".to_owned(),
        "plain prose with ünïcödé, 日本語 and no secret at all.".to_owned(),
    ]
}

#[test]
fn a_secret_split_at_every_boundary_is_masked_and_the_stream_equals_the_whole() {
    for options in [RedactOptions::FILE_READ, RedactOptions::STRICT] {
        for text in texts() {
            let expected = whole(&text, options);
            let bounds: Vec<usize> = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .collect();
            for &i in &bounds {
                let near = [1, 2, 3, 5, 8, 13, 21];
                for &j in bounds
                    .iter()
                    .filter(|&&j| near.contains(&(j.saturating_sub(i))))
                {
                    let got = streamed(&[&text[..i], &text[i..j], &text[j..]], options);
                    assert_eq!(got, expected, "split at {i},{j} of {text:?}");
                }
            }
        }
    }
}

#[test]
fn byte_sized_and_word_sized_chunks_never_show_a_secret() {
    let text = format!(
        "one {VENDOR} two {PLAIN} three {} four {SPACED} five",
        B64.encode(format!("x{PLAIN}"))
    );
    let chars: Vec<String> = text.chars().map(String::from).collect();
    let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
    let mut r = StreamRedactor::with_known(RedactOptions::FILE_READ, known());
    let mut shown = String::new();
    for chunk in &chars {
        shown.push_str(&r.push(chunk));
        for secret in [VENDOR, PLAIN, SPACED] {
            assert!(!shown.contains(secret), "{shown}");
        }
        // Only the end that may still be a secret waits.
        assert!(r.held() <= 80, "held {} bytes", r.held());
    }
    shown.push_str(&r.finish());
    assert_eq!(shown, whole(&text, RedactOptions::FILE_READ));
    assert!(shown.starts_with("one «redacted:sk-…» two «redacted-secret» three"));
}

#[test]
fn prose_is_released_word_by_word() {
    let mut r = StreamRedactor::with_known(RedactOptions::FILE_READ, known());
    assert_eq!(r.push("Hello wor"), "Hello ");
    assert_eq!(r.push("ld, and"), "world, ");
    assert_eq!(r.push(" more\n"), "and more\n");
    assert_eq!(r.finish(), "");
}

#[test]
fn a_wrapped_base64_block_is_held_until_it_ends() {
    let file = format!("HEADER_LINE=some configuration value\nDB_PASSWORD={PLAIN}\nEND=1\n");
    let flat = B64.encode(file.as_bytes());
    let wrapped: Vec<&str> = flat
        .as_bytes()
        .chunks(76)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let text = format!("Encoded:\n{}\n\nDone.", wrapped.join("\n"));
    let pieces: Vec<String> = text
        .as_bytes()
        .chunks(8)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let out = streamed(&pieces, RedactOptions::FILE_READ);
    for line in &wrapped {
        assert!(!out.contains(line), "{out}");
    }
    assert_eq!(out, whole(&text, RedactOptions::FILE_READ));
}

#[test]
fn a_long_run_is_released_past_the_cap() {
    let mut r = StreamRedactor::with_known(RedactOptions::FILE_READ, None);
    let long = "x".repeat(RUN_CAP * 2);
    let shown = r.push(&long);
    assert_eq!(shown.len(), RUN_CAP);
    assert_eq!(r.held(), RUN_CAP);
}

#[test]
fn masking_a_stream_costs_little_per_megabyte() {
    let paragraph = "The quick brown fox jumps over the lazy dog; fn main() { println!(\"hi\"); } \
                     see https://example.com/docs?page=2 for details.\n";
    let text = paragraph.repeat((1 << 20) / paragraph.len() + 1);
    let chunks: Vec<&str> = text
        .as_bytes()
        .chunks(8)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let start = Instant::now();
    let out = streamed(&chunks, RedactOptions::FILE_READ);
    let elapsed = start.elapsed();
    assert_eq!(out.len(), text.len());
    // Generous for debug builds on a shared machine; the benchmark measures properly.
    assert!(elapsed.as_secs_f64() < 20.0, "1 MiB took {elapsed:?}");
}
