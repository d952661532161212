//! Property: writing a command another way — quoting, escapes, `$IFS`,
//! `$'…'`, variables, braces, substitutions, wrappers, lists, nested shells —
//! never changes what detection says about it; and detection on the
//! normalised spelling equals detection on the original. The cargo-fuzz
//! target `fuzz/fuzz_targets/spellings.rs` checks the second half on
//! arbitrary input.

use super::spellings::{BASES, K, Rng, mutate};
use super::{Verdict, classify, normalize};

fn kind(v: &Verdict) -> K {
    match v {
        Verdict::Safe => K::Safe,
        Verdict::Dangerous { .. } => K::Danger,
        Verdict::Hardline { .. } => K::Hard,
    }
}

#[test]
fn spelling_never_changes_the_verdict() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut failures = Vec::new();
    for (argv, want) in BASES {
        assert_eq!(kind(&classify(&argv.join(" "))), *want, "base {argv:?}");
        for _ in 0..150 {
            let (spelled, transparent) = mutate(argv, &mut rng);
            let got = kind(&classify(&spelled));
            // A shell wrapper makes a safe command need approval; it never
            // makes a destructive one look safer.
            let ok = if transparent {
                got == *want
            } else {
                got == *want || (*want == K::Safe && got == K::Danger)
            };
            if !ok {
                failures.push(format!("{spelled:?}: want {want:?}, got {got:?}"));
            }
        }
    }
    failures.dedup();
    assert!(
        failures.is_empty(),
        "{} spellings changed the verdict:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn detection_on_the_normalised_form_equals_detection_on_the_original() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut failures = Vec::new();
    for (argv, _) in BASES {
        for _ in 0..100 {
            let (spelled, _) = mutate(argv, &mut rng);
            let normal = normalize(&spelled);
            let (a, b) = (kind(&classify(&spelled)), kind(&classify(&normal)));
            if a != b {
                failures.push(format!("{spelled:?} → {normal:?}: {a:?} vs {b:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn whole_scripts_normalise_without_changing_the_verdict() {
    for script in [
        ":(){ :|:& };:",
        "a(){ a|a& };a",
        "cd / && rm -rf *",
        "for d in /; do rm -rf $d; done",
        "bash <<EOF\nrm -rf /\nEOF",
        "cat <<EOF; rm -rf /\nhello\nEOF",
        "IFS=,;X=rm,-rf,/;$X",
        "set -- rm -rf /; \"$@\"",
        "echo cm0gLXJmIC8= | base64 -d | sh",
        "git status && ls",
    ] {
        let normal = normalize(script);
        assert_eq!(
            kind(&classify(script)),
            kind(&classify(&normal)),
            "{script:?} → {normal:?}"
        );
    }
}

#[test]
fn normalising_writes_out_what_the_shell_would_run() {
    assert_eq!(normalize("rm${IFS}-rf${IFS}/").trim(), "rm -rf /");
    assert_eq!(normalize("$'\\x72m' -rf /").trim(), "rm -rf /");
    assert_eq!(normalize("{rm,-rf,/}").trim(), "rm -rf /");
    assert_eq!(normalize("X=rm; $X -rf /"), "X=rm\nrm -rf /\n");
    assert_eq!(normalize("'r''m' \"$(echo -rf)\" /").trim(), "rm -rf /");
    // What cannot be known stays as written.
    assert_eq!(normalize("$UNKNOWN -rf /").trim(), "${UNKNOWN} -rf /");
}
