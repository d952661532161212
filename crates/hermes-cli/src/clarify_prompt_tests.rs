use super::*;
use crate::terminal_keys::decode;

fn choices() -> Vec<String> {
    vec!["staging".to_owned(), "prod".to_owned()]
}

#[test]
fn clarify_menu_renders_choices_other_and_a_hint() {
    insta::assert_snapshot!(
        "clarify_menu_first",
        render_menu("Which target?", &choices(), 0, false)
    );
    insta::assert_snapshot!(
        "clarify_menu_other",
        render_menu("Which target?\nIt matters.", &choices(), 2, false)
    );
    let colored = render_menu("Which target?", &choices(), 1, true);
    assert!(
        colored.contains("\x1b[1;36m  ❯ 2. prod\x1b[0m"),
        "{colored:?}"
    );
}

#[test]
fn clarify_plain_list_and_answers() {
    assert_eq!(
        render_plain("Which target?", &choices()),
        "❓ Which target?\n  1. staging\n  2. prod\n  3. Other (type your answer)\nChoice (number, or type your answer): "
    );
    assert_eq!(render_plain("Name?", &[]), "❓ Name?\nYour answer: ");
    assert_eq!(parse_plain(" 2\n", &choices()).as_deref(), Some("prod"));
    assert_eq!(parse_plain("3", &choices()), None);
    assert_eq!(parse_plain("4", &choices()).as_deref(), Some("4"));
    assert_eq!(
        parse_plain(" canary ", &choices()).as_deref(),
        Some("canary")
    );
}

#[test]
fn clarify_keys_decode() {
    assert_eq!(decode(b"\x1b[A"), Some((Key::Up, 3)));
    assert_eq!(decode(b"\x1bOB"), Some((Key::Down, 3)));
    assert_eq!(decode(b"\x1b[200~x"), Some((Key::Ignored, 6)));
    assert_eq!(decode(b"\x1b"), None);
    assert_eq!(decode(b"\x1b["), None);
    assert_eq!(decode(b"\x1bx"), Some((Key::Cancel, 1)));
    assert_eq!(decode(b"\r"), Some((Key::Enter, 1)));
    assert_eq!(decode(b"\x03"), Some((Key::Cancel, 1)));
    assert_eq!(decode(b"\x7f"), Some((Key::Backspace, 1)));
    assert_eq!(decode(b"2"), Some((Key::Char('2'), 1)));
    assert_eq!(decode("é".as_bytes()), Some((Key::Char('é'), 2)));
    assert_eq!(decode(&"é".as_bytes()[..1]), None);
    assert_eq!(decode(b""), None);
}
