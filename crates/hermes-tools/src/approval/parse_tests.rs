use super::*;

/// Every simple command's words as text, in order (subshells included).
fn words(src: &str) -> Vec<Vec<String>> {
    fn collect(script: &Script, out: &mut Vec<Vec<String>>) {
        for node in &script.nodes {
            match node {
                Node::Pipeline { stages, .. } => {
                    out.extend(
                        stages
                            .iter()
                            .map(|s| s.words.iter().map(Word::text).collect()),
                    );
                }
                Node::Subshell(inner) => collect(inner, out),
                Node::Function(_) => {}
            }
        }
    }
    let mut out = Vec::new();
    collect(&parse(src), &mut out);
    out
}

fn pipelines(src: &str) -> usize {
    parse(src)
        .nodes
        .iter()
        .filter(|n| matches!(n, Node::Pipeline { .. }))
        .count()
}

#[test]
fn splits_on_separators_and_pipes() {
    assert_eq!(
        words("ls -la; echo hi && rm x || true | cat & sleep 1"),
        vec![
            vec!["ls", "-la"],
            vec!["echo", "hi"],
            vec!["rm", "x"],
            vec!["true"],
            vec!["cat"],
            vec!["sleep", "1"]
        ]
    );
    assert_eq!(pipelines("a | b | c; d"), 2);
    let background = parse("sleep 1 & ls");
    assert!(matches!(
        background.nodes[0],
        Node::Pipeline {
            background: true,
            ..
        }
    ));
}

#[test]
fn removes_quotes_and_keeps_quoted_separators_in_words() {
    assert_eq!(
        words(r#"echo "a; rm -rf /" 'b|c' d\ e"#),
        vec![vec!["echo", "a; rm -rf /", "b|c", "d e"]]
    );
}

#[test]
fn words_keep_their_parts() {
    let script = parse(r#"echo $X "${HOME:-/}" $(id) `pwd` $((1+1)) <(ls) $'\x72m' '$Y'"#);
    let Node::Pipeline { stages, .. } = &script.nodes[0] else {
        panic!("{script:?}")
    };
    let parts: Vec<&Part> = stages[0].words[1..].iter().map(|w| &w.parts[0]).collect();
    assert_eq!(
        parts,
        vec![
            &Part::Param {
                expr: "X".into(),
                quoted: false
            },
            &Part::Param {
                expr: "HOME:-/".into(),
                quoted: true
            },
            &Part::Command {
                script: "id".into(),
                quoted: false
            },
            &Part::Command {
                script: "pwd".into(),
                quoted: false
            },
            &Part::Arith,
            &Part::Process {
                script: "ls".into()
            },
            &Part::Lit {
                text: "rm".into(),
                quoted: true
            },
            &Part::Lit {
                text: "$Y".into(),
                quoted: true
            },
        ]
    );
}

#[test]
fn assignments_subshells_and_functions_are_recognised() {
    let script = parse("X=rm Y=\"a b\" cmd; (cd /; ls); f() { rm -rf /; }; function g { :; }");
    let Node::Pipeline { stages, .. } = &script.nodes[0] else {
        panic!()
    };
    let names: Vec<&str> = stages[0]
        .assignments
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, vec!["X", "Y"]);
    assert_eq!(stages[0].words[0].text(), "cmd");
    assert!(matches!(&script.nodes[1], Node::Subshell(inner) if inner.nodes.len() == 2));
    assert!(script.nodes.contains(&Node::Function("f".into())));
    assert!(script.nodes.contains(&Node::Function("g".into())));
    // The function body is an ordinary command after the definition.
    assert!(words("f() { rm -rf /; }").contains(&vec![
        "{".to_owned(),
        "rm".into(),
        "-rf".into(),
        "/".into()
    ]));
}

#[test]
fn redirections_are_separate_from_words() {
    let p = parse("cat x 2>/dev/null >> '/etc/hosts' &>out");
    let Node::Pipeline { stages, .. } = &p.nodes[0] else {
        panic!()
    };
    let s = &stages[0];
    assert_eq!(
        s.words.iter().map(Word::text).collect::<Vec<_>>(),
        vec!["cat", "x"]
    );
    let ops: Vec<(String, String)> = s
        .redirects
        .iter()
        .map(|r| (r.op.clone(), r.target.text()))
        .collect();
    assert_eq!(
        ops,
        vec![
            (">".into(), "/dev/null".into()),
            (">>".into(), "/etc/hosts".into()),
            (">".into(), "out".into())
        ]
    );
}

#[test]
fn heredoc_bodies_are_not_commands() {
    let p = parse("cat <<EOF\nrm -rf /\nEOF\necho done");
    assert_eq!(words("cat <<EOF\nrm -rf /\nEOF\necho done").len(), 2);
    let Node::Pipeline { stages, .. } = &p.nodes[0] else {
        panic!()
    };
    assert_eq!(stages[0].heredocs, vec!["rm -rf /\n"]);
}

#[test]
fn line_continuations_join_and_comments_drop() {
    assert_eq!(
        words("rm \\\n -rf /tmp/x # rm -rf /"),
        vec![vec!["rm", "-rf", "/tmp/x"]]
    );
}

#[test]
fn ansi_c_escapes_decode() {
    assert_eq!(ansi_c(r"\x72\x6d"), "rm");
    assert_eq!(ansi_c(r"\162\155"), "rm");
    assert_eq!(ansi_c(r"\u0072m\n"), "rm\n");
    assert_eq!(ansi_c(r"a\qb"), "a\\qb");
}

#[test]
fn unbalanced_input_does_not_panic() {
    for s in [
        "'",
        "\"",
        "$(",
        "`",
        "((",
        "<<",
        ">",
        "\\",
        "a &&",
        "$(echo \"",
        "<(",
        "${",
        "$'",
        "f(",
        "f()",
        "function",
        ")",
        "(((",
        "$((",
    ] {
        let _ = parse(s);
    }
}
