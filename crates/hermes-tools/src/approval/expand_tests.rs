use super::*;
use crate::approval::parse::{Node, parse};

/// The fields of the first command's words.
fn fields(src: &str, env: &Env) -> Vec<(String, bool)> {
    let script = parse(src);
    let Some(Node::Pipeline { stages, .. }) = script.nodes.first() else {
        return Vec::new();
    };
    expand_all(&stages[0].words, env, 0)
        .into_iter()
        .map(|f| (f.text, f.certain))
        .collect()
}

fn texts(src: &str) -> Vec<String> {
    fields(src, &Env::default())
        .into_iter()
        .map(|(t, _)| t)
        .collect()
}

#[test]
fn ifs_braces_quotes_and_ansi_c() {
    assert_eq!(texts("rm${IFS}-rf${IFS}/"), vec!["rm", "-rf", "/"]);
    assert_eq!(texts("{rm,-rf,/}"), vec!["rm", "-rf", "/"]);
    assert_eq!(texts("ls /{etc,usr}/x"), vec!["ls", "/etc/x", "/usr/x"]);
    assert_eq!(
        texts("echo {1..3} {a..c}"),
        vec!["echo", "1", "2", "3", "a", "b", "c"]
    );
    assert_eq!(
        texts("echo '{a,b}' \\{a,b\\}"),
        vec!["echo", "{a,b}", "{a,b}"]
    );
    assert_eq!(texts("$'\\x72m' \"a b\""), vec!["rm", "a b"]);
    assert_eq!(texts("echo ''"), vec!["echo", ""]);
}

#[test]
fn variables_known_and_unknown() {
    let mut env = Env::default();
    env.vars.insert("X".into(), Value::Known("rm -rf".into()));
    env.vars.insert("IFS".into(), Value::Known(",".into()));
    env.vars.insert("L".into(), Value::Known("a,b".into()));
    assert_eq!(
        fields("$L \"$L\" $NOPE ${NOPE:-/etc} ${X:0:2}", &env),
        vec![
            ("a".into(), true),
            ("b".into(), true),
            ("a,b".into(), true),
            (String::new(), false),
            ("/etc".into(), true),
            ("rm".into(), true),
        ]
    );
    let home = Env {
        home: Some("/home/al".into()),
        ..Env::default()
    };
    assert_eq!(
        fields("~ ~/x $HOME \"${HOME:?}\"", &home),
        vec![
            ("/home/al".into(), true),
            ("/home/al/x".into(), true),
            ("/home/al".into(), true),
            ("/home/al".into(), true),
        ]
    );
}

#[test]
fn trivial_substitutions_are_evaluated_others_are_not() {
    let env = Env::default();
    assert_eq!(static_output("echo rm", &env, 0).as_deref(), Some("rm"));
    assert_eq!(
        static_output("printf '%s-%s' a b", &env, 0).as_deref(),
        Some("a-b")
    );
    assert_eq!(
        static_output("printf '\\x72\\x6d'", &env, 0).as_deref(),
        Some("rm")
    );
    assert_eq!(
        static_output("echo cm0gLXJmIC8= | base64 -d", &env, 0).as_deref(),
        Some("rm -rf /")
    );
    assert_eq!(
        static_output("echo mr | rev", &env, 0).as_deref(),
        Some("rm")
    );
    assert_eq!(
        static_output("base64 -d <<< cm0=", &env, 0).as_deref(),
        Some("rm")
    );
    assert_eq!(static_output("cat /etc/passwd", &env, 0), None);
    assert_eq!(static_output("echo $UNSET", &env, 0), None);
    assert_eq!(
        fields("$(echo rm) `date`", &env),
        vec![("rm".into(), true), (String::new(), false)]
    );
}

#[test]
fn brace_expansion_is_bounded() {
    let many = "{a,b}".repeat(20);
    assert!(texts(&format!("echo {many}")).len() <= MAX_BRACE_WORDS + 1);
}
