use super::*;

/// Escape codes made visible, so snapshots stay readable.
fn show(s: &str) -> String {
    s.replace('\x1b', "␛")
}

fn render_streamed(doc: &str, chunk: usize) -> String {
    let mut md = Markdown::new();
    let mut out = String::new();
    let chars: Vec<char> = doc.chars().collect();
    for piece in chars.chunks(chunk) {
        out.push_str(&md.feed(&piece.iter().collect::<String>()));
    }
    out.push_str(&md.finish());
    out
}

const DOC: &str = "# Title\n\nSome **bold**, *italic* and `code` with a [link](https://x.io).\n\n## Steps\n\n- first item\n- [x] done\n  1. nested *one*\n> a quote\n\n```rust\nfn main() {\n    let s = \"hi\"; // greet\n}\n```\n\n| Name | Size |\n|------|-----:|\n| `a.rs` | 10 |\n| b | 2000 |\n\n---\nThe end";

#[test]
fn a_document_renders_the_same_however_it_is_split() {
    let whole = render_streamed(DOC, usize::MAX);
    for chunk in [1, 3, 7] {
        assert_eq!(render_streamed(DOC, chunk), whole, "chunk {chunk}");
    }
    insta::assert_snapshot!("markdown_document", show(&whole));
}

#[test]
fn lines_are_drawn_as_soon_as_they_end() {
    let mut md = Markdown::new();
    assert_eq!(md.feed("Hello **wor"), "");
    let line = md.feed("ld**\nnext");
    assert_eq!(show(&line), "Hello ␛[1mworld␛[0m\n");
    assert_eq!(md.finish(), "next\n");
}

#[test]
fn tables_wait_for_their_last_row_and_align() {
    let mut md = Markdown::new();
    assert_eq!(md.feed("| a | b |\n|---|---|\n| long cell | x |\n"), "");
    let out = md.finish();
    let plain: Vec<String> = out
        .lines()
        .map(|l| {
            let mut s = String::new();
            let mut esc = false;
            for c in l.chars() {
                match (esc, c) {
                    (false, '\x1b') => esc = true,
                    (true, 'm') => esc = false,
                    (true, _) => {}
                    (false, c) => s.push(c),
                }
            }
            s
        })
        .collect();
    assert_eq!(
        plain,
        vec!["  a         │ b", "  ──────────┼──", "  long cell │ x"]
    );
}

#[test]
fn text_that_looks_like_a_block_stays_text() {
    assert_eq!(inline("2024. A year"), "2024. A year");
    assert_eq!(show(&inline("**b** rest")), "␛[1mb␛[0m rest");
    assert_eq!(visible_width("\x1b[1mab\x1b[0mc"), 3);
}
