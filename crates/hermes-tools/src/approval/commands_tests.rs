use super::*;

fn field(text: &str) -> Field {
    Field {
        text: text.into(),
        certain: true,
        glob: text.contains(['*', '?', '[']),
        ..Field::default()
    }
}

#[test]
fn root_like_paths() {
    let env = Env::default();
    let root = |t: &str| root_like(&field(t), &env);
    assert_eq!(root("/"), Some(Root::Filesystem));
    assert_eq!(root("/./..//"), Some(Root::Filesystem));
    assert_eq!(root("/etc/"), Some(Root::System));
    assert_eq!(root("/tmp"), Some(Root::System));
    assert_eq!(
        root("/*/"),
        Some(Root::Filesystem),
        "every top-level directory"
    );
    assert_eq!(root("/[e]tc"), Some(Root::System));
    assert_eq!(root("~"), Some(Root::Home));
    assert_eq!(root("/tmp/x"), None);
    assert_eq!(root("/etcetera"), None);
    assert_eq!(root("*"), None, "relative with no known working directory");
    let in_root = Env {
        cwd: Some("/".into()),
        ..Env::default()
    };
    assert_eq!(root_like(&field("*"), &in_root), Some(Root::Filesystem));
    assert_eq!(root_like(&field("etc"), &in_root), Some(Root::System));
}

#[test]
fn cd_targets() {
    let env = Env {
        cwd: Some("/usr".into()),
        home: Some("/home/a".into()),
        ..Env::default()
    };
    assert_eq!(cd_target(&[field("..")], &env).as_deref(), Some("/"));
    assert_eq!(cd_target(&[field("/etc/")], &env).as_deref(), Some("/etc"));
    assert_eq!(cd_target(&[], &env).as_deref(), Some("/home/a"));
    assert_eq!(cd_target(&[field("-")], &env), None);
    let unknown = Field {
        certain: false,
        ..Field::default()
    };
    assert_eq!(cd_target(&[unknown], &env), None);
}

#[test]
fn wrappers_unwrap_to_the_command_they_run() {
    let env = Env::default();
    let mut acc = Acc::default();
    let run = |words: &[&str], acc: &mut Acc| {
        let cmd = unwrap(words.iter().map(|w| field(w)).collect(), &env, 0, acc);
        cmd.argv.iter().map(|f| f.text.clone()).collect::<Vec<_>>()
    };
    assert_eq!(
        run(&["sudo", "-nu", "root", "/bin/rm", "x"], &mut acc),
        vec!["rm", "x"]
    );
    assert_eq!(
        run(&["sudo", "-uroot", "rm", "x"], &mut acc),
        vec!["rm", "x"]
    );
    assert_eq!(
        run(&["exec", "-a", "name", "rm", "x"], &mut acc),
        vec!["rm", "x"]
    );
    assert_eq!(
        run(&["timeout", "-s", "KILL", "5", "rm"], &mut acc),
        vec!["rm"]
    );
    assert_eq!(run(&["busybox", "rm", "x"], &mut acc), vec!["rm", "x"]);
    assert_eq!(run(&["env", "-i", "A=1", "rm"], &mut acc), vec!["rm"]);
    assert!(
        run(&["command", "-v", "rm"], &mut acc).is_empty(),
        "a lookup runs nothing"
    );
    assert_eq!(
        run(&["git", "-C", "repo", "-c", "a=b", "push", "-f"], &mut acc),
        vec!["git", "push", "-f"]
    );
}
