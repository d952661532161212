use super::*;

fn words(src: &str) -> Vec<Vec<String>> {
    parse(src)
        .pipelines
        .into_iter()
        .flatten()
        .map(|s| s.words)
        .collect()
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
    assert_eq!(parse("a | b | c; d").pipelines.len(), 2);
}

#[test]
fn removes_quotes_and_keeps_quoted_separators_in_words() {
    assert_eq!(
        words(r#"echo "a; rm -rf /" 'b|c' d\ e"#),
        vec![vec!["echo", "a; rm -rf /", "b|c", "d e"]]
    );
}

#[test]
fn collects_substitutions_and_subshells() {
    let p = parse("echo $(rm -rf /) `id` \"$(whoami)\" <(curl x); (cd /; ls)");
    assert_eq!(
        p.nested,
        vec!["rm -rf /", "id", "whoami", "curl x", "cd /; ls"]
    );
}

#[test]
fn redirections_are_separate_from_words() {
    let p = parse("cat x 2>/dev/null >> '/etc/hosts' &>out");
    let s = &p.pipelines[0][0];
    assert_eq!(s.words, vec!["cat", "x"]);
    let ops: Vec<(&str, &str)> = s
        .redirects
        .iter()
        .map(|r| (r.op.as_str(), r.target.as_str()))
        .collect();
    assert_eq!(
        ops,
        vec![(">", "/dev/null"), (">>", "/etc/hosts"), (">", "out")]
    );
}

#[test]
fn heredoc_bodies_are_not_commands() {
    let p = parse("cat <<EOF\nrm -rf /\nEOF\necho done");
    assert_eq!(words("cat <<EOF\nrm -rf /\nEOF\necho done").len(), 2);
    assert_eq!(p.pipelines[0][0].heredocs, vec!["rm -rf /\n"]);
}

#[test]
fn line_continuations_join_and_comments_drop() {
    assert_eq!(
        words("rm \\\n -rf /tmp/x # rm -rf /"),
        vec![vec!["rm", "-rf", "/tmp/x"]]
    );
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
    ] {
        let _ = parse(s);
    }
}
