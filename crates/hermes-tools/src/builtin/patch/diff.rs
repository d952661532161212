//! A small line diff (Myers) and a unified-diff renderer in the style of
//! `diff -u` / Python's `difflib.unified_diff` (3 lines of context).

/// One step of an edit script between two line sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edit {
    /// Line `a[i]` equals `b[j]`.
    Equal(usize, usize),
    /// Line `a[i]` is removed.
    Delete(usize),
    /// Line `b[j]` is inserted.
    Insert(usize),
}

/// Edit distances above this give up on a minimal script (the middle is then
/// reported as wholly replaced), bounding time and memory on unrelated inputs.
const MAX_EDIT_DISTANCE: usize = 2_000;

/// A minimal edit script turning `a` into `b`.
pub(crate) fn edit_script<T: PartialEq>(a: &[T], b: &[T]) -> Vec<Edit> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut edits: Vec<Edit> = (0..prefix).map(|i| Edit::Equal(i, i)).collect();
    let middle = myers(a_mid, b_mid).unwrap_or_else(|| {
        let mut all: Vec<Edit> = (0..a_mid.len()).map(Edit::Delete).collect();
        all.extend((0..b_mid.len()).map(Edit::Insert));
        all
    });
    edits.extend(middle.into_iter().map(|e| match e {
        Edit::Equal(i, j) => Edit::Equal(i + prefix, j + prefix),
        Edit::Delete(i) => Edit::Delete(i + prefix),
        Edit::Insert(j) => Edit::Insert(j + prefix),
    }));
    let (a_tail, b_tail) = (a.len() - suffix, b.len() - suffix);
    edits.extend((0..suffix).map(|k| Edit::Equal(a_tail + k, b_tail + k)));
    edits
}

/// Myers' O((N+M)·D) diff; `None` when D exceeds [`MAX_EDIT_DISTANCE`].
fn myers<T: PartialEq>(a: &[T], b: &[T]) -> Option<Vec<Edit>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max_d = (a.len() + b.len()).min(MAX_EDIT_DISTANCE) as isize;
    let offset = max_d + 1;
    let mut v = vec![0isize; (2 * max_d + 3) as usize];
    // trace[d] holds v[-d..=d] after round d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let at = |k: isize| (k + offset) as usize;
    for d in 0..=max_d {
        let mut k = -d;
        let mut done = false;
        while k <= d {
            let mut x = if k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]) {
                v[at(k + 1)]
            } else {
                v[at(k - 1)] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[at(k)] = x;
            if x >= n && y >= m {
                done = true;
                break;
            }
            k += 2;
        }
        trace.push(v[at(-d)..=at(d)].to_vec());
        if done {
            return Some(backtrack(&trace, n, m));
        }
    }
    None
}

fn backtrack(trace: &[Vec<isize>], n: isize, m: isize) -> Vec<Edit> {
    let mut out = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..trace.len() as isize).rev() {
        let prev = &trace[(d - 1) as usize];
        let get = |k: isize| prev[(k + d - 1) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && get(k - 1) < get(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = get(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            out.push(Edit::Equal((x - 1) as usize, (y - 1) as usize));
            x -= 1;
            y -= 1;
        }
        if x == prev_x {
            out.push(Edit::Insert((y - 1) as usize));
        } else {
            out.push(Edit::Delete((x - 1) as usize));
        }
        x = prev_x;
        y = prev_y;
    }
    while x > 0 && y > 0 {
        out.push(Edit::Equal((x - 1) as usize, (y - 1) as usize));
        x -= 1;
        y -= 1;
    }
    out.reverse();
    out
}

const CONTEXT: usize = 3;

/// A unified diff of `old` → `new` with `--- from` / `+++ to` headers; empty
/// when the texts are equal.
pub(crate) fn unified_diff(old: &str, new: &str, from: &str, to: &str) -> String {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let edits = edit_script(&a, &b);
    let changes: Vec<usize> = edits
        .iter()
        .enumerate()
        .filter(|(_, e)| !matches!(e, Edit::Equal(..)))
        .map(|(i, _)| i)
        .collect();
    if changes.is_empty() {
        return String::new();
    }
    // Line positions in a and b before each edit, for hunk headers.
    let mut pos = Vec::with_capacity(edits.len() + 1);
    let (mut ai, mut bi) = (0usize, 0usize);
    for e in &edits {
        pos.push((ai, bi));
        match e {
            Edit::Equal(..) => {
                ai += 1;
                bi += 1;
            }
            Edit::Delete(_) => ai += 1,
            Edit::Insert(_) => bi += 1,
        }
    }
    pos.push((ai, bi));

    let mut out = format!("--- {from}\n+++ {to}\n");
    let mut i = 0;
    while i < changes.len() {
        let first = changes[i];
        let mut last = first;
        while i + 1 < changes.len() && changes[i + 1] - last <= 2 * CONTEXT + 1 {
            i += 1;
            last = changes[i];
        }
        i += 1;
        let start = first.saturating_sub(CONTEXT);
        let end = (last + CONTEXT + 1).min(edits.len());
        let (a0, b0) = pos[start];
        let (a1, b1) = pos[end];
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(a0, a1 - a0),
            range(b0, b1 - b0)
        ));
        for e in &edits[start..end] {
            let (sign, line) = match *e {
                Edit::Equal(x, _) => (' ', a[x]),
                Edit::Delete(x) => ('-', a[x]),
                Edit::Insert(y) => ('+', b[y]),
            };
            out.push(sign);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

fn range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
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

    #[test]
    fn edit_script_is_minimal() {
        let a = ["a", "b", "c", "d"];
        let b = ["a", "x", "c", "d", "e"];
        let edits = edit_script(&a, &b);
        let changes = edits
            .iter()
            .filter(|e| !matches!(e, Edit::Equal(..)))
            .count();
        assert_eq!(changes, 3);
    }
}
