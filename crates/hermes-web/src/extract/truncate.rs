//! A long page cut to its head and tail, as the reference cuts it: the whole
//! text is kept in `cache/web/` and a footer says how to read the middle.

use std::path::Path;

use sha2::{Digest, Sha256};

/// The most of a page kept on disk.
const MAX_STORED: usize = 2_000_000;

/// `n` with thousands separators (`12,345`), as the reference's footer has them.
fn grouped(n: usize) -> String {
    hermes_state::numfmt::thousands(n as u64)
}

/// Where the full text of `url` is kept: `<host>-<hash>.md`.
fn stored_path(dir: &Path, url: &str) -> std::path::PathBuf {
    let host = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("");
    let slug: String = host
        .replace(':', "_")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    let slug = slug.trim_matches('-');
    let slug = if slug.is_empty() { "page" } else { slug };
    let hash = hex::encode(Sha256::digest(url.as_bytes()));
    dir.join(format!("{slug}-{}.md", &hash[..10]))
}

fn char_prefix(text: &str, chars: usize) -> &str {
    text.char_indices()
        .nth(chars)
        .map_or(text, |(i, _)| &text[..i])
}

fn char_suffix(text: &str, chars: usize) -> &str {
    let total = text.chars().count();
    if chars >= total {
        return text;
    }
    text.char_indices()
        .nth(total - chars)
        .map_or("", |(i, _)| &text[i..])
}

/// `text` whole when it fits `limit` characters, else its head (¾) and tail
/// (¼) cut at line ends where that loses little, with the full text stored
/// under `dir` and a footer that says where.
pub fn fit(text: &str, url: &str, limit: usize, dir: &Path) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text.to_owned();
    }
    let head_budget = limit * 3 / 4;
    let tail_budget = limit - head_budget;
    let mut head = char_prefix(text, head_budget);
    if let Some(cut) = head.rfind('\n')
        && head[..cut].chars().count() > head_budget / 2
    {
        head = &head[..cut];
    }
    let mut tail = char_suffix(text, tail_budget);
    if let Some(cut) = tail.find('\n')
        && tail[..cut].chars().count() < tail_budget / 2
    {
        tail = &tail[cut + 1..];
    }
    let path = stored_path(dir, url);
    let stored = std::fs::create_dir_all(dir).and_then(|()| {
        if total > MAX_STORED {
            let kept = format!(
                "{}\n\n[... stored copy truncated at {} chars of {}; re-extract a more specific URL for the rest ...]",
                char_prefix(text, MAX_STORED),
                grouped(MAX_STORED),
                grouped(total)
            );
            std::fs::write(&path, kept)
        } else {
            std::fs::write(&path, text)
        }
    });
    let where_ = match stored {
        Ok(()) => {
            let path = path.canonicalize().unwrap_or(path);
            format!(
                "Full text saved to: {p}\nTo read the omitted middle: read_file path=\"{p}\" offset={} limit=200  (the file is the complete page; raise/lower offset to page through it).",
                head.matches('\n').count() + 2,
                p = path.display()
            )
        }
        Err(_) => "Full text could not be stored; re-run web_extract on a more specific URL or use browser_navigate for the complete page.".to_owned(),
    };
    format!(
        "{head}\n\n[... middle omitted — see footer ...]\n\n{tail}\n\n──────── [TRUNCATED] ────────\nShowing {} chars (head) + {} chars (tail) of {} total clean characters.\n{where_}\n─────────────────────────────",
        grouped(head.chars().count()),
        grouped(tail.chars().count()),
        grouped(total)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn short_pages_pass_and_long_ones_keep_head_tail_and_a_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(fit("short", "https://x.test/", 2000, dir.path()), "short");
        let lines: Vec<String> = (0..2000)
            .map(|i| format!("line {i:04} of the page"))
            .collect();
        let text = lines.join("\n");
        let out = fit(&text, "https://docs.example.com:8080/a?b", 2000, dir.path());
        assert!(out.starts_with("line 0000 of the page\n"));
        assert!(out.contains("[... middle omitted — see footer ...]"));
        assert!(out.contains("line 1999 of the page\n\n──────── [TRUNCATED] ────────"));
        assert!(out.contains(&format!(
            "of {} total clean characters.",
            grouped(text.chars().count())
        )));
        let saved = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let name = saved.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("docs.example.com_8080-") && name.ends_with(".md"),
            "{name}"
        );
        assert_eq!(std::fs::read_to_string(&saved).unwrap(), text);
        // The footer's offset lands just after what the head showed.
        let offset: usize = out
            .split("offset=")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let head_lines = out.split("\n\n[... middle").next().unwrap().lines().count();
        assert_eq!(offset, head_lines + 1);
        assert_eq!(grouped(1234567), "1,234,567");
    }
}
