//! A unified diff in the style of `diff -u` / Python's `difflib.unified_diff`
//! (3 lines of context), from the `similar` crate.

use std::time::Duration;

/// How long the diff may look for a minimal script before it settles for a
/// coarser one (bounds time on large, unrelated inputs).
const DIFF_DEADLINE: Duration = Duration::from_secs(1);

/// A unified diff of `old` → `new` with `--- from` / `+++ to` headers; empty
/// when the texts are equal.
pub(crate) fn unified_diff(old: &str, new: &str, from: &str, to: &str) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(from, to)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_texts_have_no_diff() {
        assert_eq!(unified_diff("a\nb\n", "a\nb\n", "a/x", "b/x"), "");
    }

    #[test]
    fn single_line_change_has_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let new = "1\n2\n3\n4\nFIVE\n6\n7\n8\n";
        let d = unified_diff(old, new, "a/f", "b/f");
        assert!(d.starts_with("--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n"), "{d}");
        assert!(d.contains("-5\n+FIVE\n"));
    }

    #[test]
    fn distant_changes_make_two_hunks() {
        let old: String = (1..=30).map(|i| format!("{i}\n")).collect();
        let new = old
            .replace("\n3\n", "\nthree\n")
            .replace("\n27\n", "\ntwenty-seven\n");
        let d = unified_diff(&old, &new, "a/f", "b/f");
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
    }

    #[test]
    fn insertion_into_empty_and_missing_newline() {
        let d = unified_diff("", "x\ny", "/dev/null", "b/f");
        assert!(
            d.contains("@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n"),
            "{d}"
        );
    }
}
