//! Respells destructive, dangerous and safe commands in ways the shell reads
//! the same (the choices come from the fuzz input) and checks that detection
//! says the same about every spelling — and the same again about the
//! normalised form of that spelling.
#![no_main]

use hermes_tools::approval::{Verdict, classify, normalize};
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/hermes-tools/src/approval/spellings.rs"]
mod spellings;

use spellings::{BASES, Choices, K, mutate};

/// The fuzz input as a stream of choices.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Choices for Bytes<'_> {
    fn below(&mut self, n: usize) -> usize {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        usize::from(b) % n.max(1)
    }
}

fn kind(v: &Verdict) -> K {
    match v {
        Verdict::Safe => K::Safe,
        Verdict::Dangerous { .. } => K::Danger,
        Verdict::Hardline { .. } => K::Hard,
    }
}

fuzz_target!(|data: &[u8]| {
    let mut choices = Bytes { data, at: 0 };
    let (argv, want) = BASES[choices.below(BASES.len())];
    let (spelled, transparent) = mutate(argv, &mut choices);
    let got = kind(&classify(&spelled));
    let same = got == want || (!transparent && want == K::Safe && got == K::Danger);
    assert!(same, "{spelled:?}: want {want:?}, got {got:?}");
    let normal = normalize(&spelled);
    assert_eq!(
        kind(&classify(&normal)),
        got,
        "{spelled:?} normalised to {normal:?}"
    );
});
