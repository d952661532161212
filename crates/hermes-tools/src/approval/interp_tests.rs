use super::*;
use crate::approval::{Verdict, classify};

fn hard(cmd: &str) -> bool {
    matches!(classify(cmd), Verdict::Hardline { .. })
}

#[test]
fn tree_deletes_of_protected_paths_are_hardline_others_need_approval() {
    assert!(hard("python3 -c \"import shutil; shutil.rmtree('/')\""));
    assert!(hard("python3 -c \"import shutil; shutil.rmtree(r'/usr')\""));
    assert!(hard("ruby -e 'FileUtils.rm_r(Dir.home)'"));
    assert!(hard(
        "perl -e 'use File::Path qw(remove_tree); remove_tree($ENV{HOME})'"
    ));
    assert!(hard(
        "node -e \"fs.rmdirSync(process.env.HOME, {recursive: true})\""
    ));
    let build = classify("python3 -c \"import shutil; shutil.rmtree('build')\"");
    assert!(matches!(build, Verdict::Dangerous { .. }), "{build:?}");
    let one = classify("python3 -c \"import os; os.remove('x.txt')\"");
    assert!(matches!(one, Verdict::Dangerous { .. }), "{one:?}");
}

#[test]
fn value_options_are_not_mistaken_for_the_code_flag() {
    // `-M…`/`-r…` carry a module name; `e` inside it is not `-e`.
    assert!(hard("perl -MFile::Path -e 'rmtree(\"/\")'"));
    assert!(hard("ruby -rfileutils -e 'FileUtils.rm_rf(\"/\")'"));
    assert_eq!(flag_of("python3.12"), Some("c"));
    assert_eq!(flag_of("php"), Some("r"));
    assert_eq!(flag_of("cargo"), None);
}

#[test]
fn programs_read_from_stdin_are_inspected() {
    assert!(hard(
        "python3 <<'EOF'\nimport shutil\nshutil.rmtree('/etc')\nEOF"
    ));
    assert!(hard(
        "printf \"import shutil; shutil.rmtree('/')\" | python3"
    ));
    let harmless = classify("python3 <<EOF\nprint('hi')\nEOF");
    assert!(
        matches!(harmless, Verdict::Dangerous { .. }),
        "{harmless:?}"
    );
}
