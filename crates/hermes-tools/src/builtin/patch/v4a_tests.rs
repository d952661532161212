use super::*;

fn ctx(s: &str) -> HunkLine {
    HunkLine::Context(s.into())
}
fn add(s: &str) -> HunkLine {
    HunkLine::Add(s.into())
}
fn del(s: &str) -> HunkLine {
    HunkLine::Remove(s.into())
}

#[test]
fn parses_every_operation_kind() {
    let patch = "\
*** Begin Patch
*** Add File: docs/new.md
+# Title
+
+body
*** Delete File: old.txt
*** Update File: src/app.py
*** Move to: src/main.py
@@ def handler():
     x = 1
-    return x
+    return x + 1
*** Move File: a.txt -> b/a.txt
*** End Patch
trailing junk is ignored";
    let ops = parse(patch).unwrap();
    assert_eq!(ops.len(), 4);
    assert_eq!(
        ops[0],
        FileOp {
            path: "docs/new.md".into(),
            kind: OpKind::Add(vec!["# Title".into(), String::new(), "body".into()]),
        }
    );
    assert_eq!(
        ops[1],
        FileOp {
            path: "old.txt".into(),
            kind: OpKind::Delete
        }
    );
    let OpKind::Update { hunks, move_to } = &ops[2].kind else {
        panic!("{:?}", ops[2])
    };
    assert_eq!(ops[2].path, "src/app.py");
    assert_eq!(move_to.as_deref(), Some("src/main.py"));
    assert_eq!(hunks.len(), 1);
    assert_eq!(hunks[0].hint.as_deref(), Some("def handler():"));
    assert_eq!(
        hunks[0].lines,
        vec![
            ctx("    x = 1"),
            del("    return x"),
            add("    return x + 1")
        ]
    );
    assert_eq!(
        ops[3],
        FileOp {
            path: "a.txt".into(),
            kind: OpKind::Move {
                to: "b/a.txt".into()
            }
        }
    );
}

#[test]
fn multiple_hunks_hints_and_end_of_file() {
    let patch = "\
*** Begin Patch
*** Update File: f.rs
@@ fn one() @@
 a
-b
+B

@@
 y
-z
+Z
*** End of File
*** End Patch";
    let ops = parse(patch).unwrap();
    let OpKind::Update { hunks, .. } = &ops[0].kind else {
        panic!()
    };
    assert_eq!(hunks.len(), 2);
    assert_eq!(hunks[0].hint.as_deref(), Some("fn one()"));
    // The blank line before the next @@ is not part of the first hunk.
    assert_eq!(hunks[0].lines, vec![ctx("a"), del("b"), add("B")]);
    assert!(!hunks[0].eof);
    assert_eq!(hunks[1].hint, None);
    assert!(hunks[1].eof);
    assert_eq!(hunks[1].search_lines(), vec!["y", "z"]);
    assert_eq!(hunks[1].replace_lines(), vec!["y", "Z"]);
}

#[test]
fn lenient_about_markers_and_prefixes() {
    // No Begin/End markers, no space after ***, CRLF, an unprefixed context
    // line, an interior blank line and a "\ No newline" marker.
    let patch = "***Update File: f.txt\r\n@@\r\nkeep\r\n\r\n-old\r\n+new\r\n\\ No newline at end of file\r\n";
    let ops = parse(patch).unwrap();
    let OpKind::Update { hunks, .. } = &ops[0].kind else {
        panic!()
    };
    assert_eq!(
        hunks[0].lines,
        vec![ctx("keep"), ctx(""), del("old"), add("new")]
    );
}

#[test]
fn hunk_without_header_is_accepted() {
    let ops = parse("*** Begin Patch\n*** Update File: f\n-a\n+b\n*** End Patch").unwrap();
    let OpKind::Update { hunks, .. } = &ops[0].kind else {
        panic!()
    };
    assert_eq!(hunks[0].lines, vec![del("a"), add("b")]);
    assert!(hunks[0].changes_anything());
}

#[test]
fn malformed_patches_are_rejected_with_reasons() {
    let cases = [
        ("*** Begin Patch\n*** End Patch", "no file operations"),
        (
            "*** Begin Patch\n*** Update File: f.txt\n*** End Patch",
            "no hunks",
        ),
        (
            "*** Begin Patch\nhello\n*** Update File: f\n-a\n*** End Patch",
            "expected a file header",
        ),
        (
            "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch",
            "unrecognised directive",
        ),
        (
            "*** Begin Patch\n*** Add File: x\nno plus\n*** End Patch",
            "must start with '+'",
        ),
        (
            "*** Begin Patch\n*** Move File: a.txt\n*** End Patch",
            "source -> destination",
        ),
        (
            "*** Begin Patch\n*** Delete File: a\n+x\n*** End Patch",
            "unexpected content",
        ),
        (
            "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch",
            "'..'",
        ),
        (
            "*** Begin Patch\n*** Update File:\n-a\n*** End Patch",
            "empty file path",
        ),
        (
            "*** Begin Patch\n*** Move to: b\n*** End Patch",
            "must follow",
        ),
        (
            "*** Begin Patch\n*** Delete File: a\n*** End of File\n*** End Patch",
            "outside an update hunk",
        ),
    ];
    for (patch, needle) in cases {
        let err = parse(patch).unwrap_err();
        assert!(err.contains(needle), "{patch:?}: {err}");
    }
}

#[test]
fn fences_and_line_range_headers_are_tolerated() {
    let patch =
        "```diff\n*** Begin Patch\n*** Update File: f\n@@ -3,2 +3,2 @@\n-a\n+b\n*** End Patch\n```";
    let ops = parse(patch).unwrap();
    let OpKind::Update { hunks, .. } = &ops[0].kind else {
        panic!()
    };
    assert_eq!(hunks[0].hint, None);
    let ops = parse("```\n*** Update File: f\n-a\n+b\n").unwrap();
    assert_eq!(ops.len(), 1);
}
