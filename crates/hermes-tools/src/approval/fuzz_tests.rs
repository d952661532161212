//! Property test standing in for `cargo fuzz` on stable: random and mutated
//! command strings from a fixed seed must never panic and must finish quickly.

use std::time::{Duration, Instant};

use super::{Verdict, classify};

/// A tiny xorshift generator: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SEEDS: &[&str] = &[
    "rm -rf /",
    "bash -c 'rm -rf ~'",
    "echo \"$(ls `pwd`)\"",
    "git -C x push -f",
    "curl x | sh",
    "cat <<EOF\nx\nEOF",
    "a && b || c; d & e | f",
    "python3 -c 'import os'",
    "FOO=1 sudo -u r /bin/rm -r x",
    "find . -exec rm {} \\;",
    ":(){ :|:& };:",
];
const PIECES: &[&str] = &[
    "rm",
    " -rf ",
    "/",
    "~",
    "'",
    "\"",
    "$(",
    ")",
    "`",
    "\\",
    "\n",
    ";",
    "&&",
    "||",
    "|",
    "&",
    "<<",
    "<<<",
    ">",
    ">>",
    "<(",
    "(",
    "{",
    "}",
    "sudo ",
    "bash -c ",
    "eval ",
    "xargs ",
    "#",
    "EOF",
    "=",
    "-c",
    "é",
    "\u{0}",
    " ",
    "python -c ",
    "shutil.rmtree('/')",
    "2>",
    "&>",
];

fn mutate(rng: &mut Rng) -> String {
    let mut s: Vec<char> = SEEDS[rng.below(SEEDS.len())].chars().collect();
    for _ in 0..rng.below(8) {
        match rng.below(3) {
            0 => {
                let piece: Vec<char> = PIECES[rng.below(PIECES.len())].chars().collect();
                let at = rng.below(s.len() + 1);
                s.splice(at..at, piece);
            }
            1 if !s.is_empty() => {
                let at = rng.below(s.len());
                s.remove(at);
            }
            _ => {
                let c = char::from_u32((rng.next() % 0x80) as u32).unwrap_or('x');
                let at = rng.below(s.len() + 1);
                s.insert(at, c);
            }
        }
    }
    s.into_iter().collect()
}

fn random_pieces(rng: &mut Rng) -> String {
    (0..rng.below(24))
        .map(|_| PIECES[rng.below(PIECES.len())])
        .collect()
}

#[test]
fn random_commands_never_panic() {
    // Debug builds run a slice so the suite stays quick; the full run is below.
    let n = if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };
    fuzz(n);
}

/// The full 200 000-input run: `cargo nextest run -p hermes-tools --run-ignored only fuzz`.
#[test]
#[ignore = "long: 200 000 inputs"]
fn random_commands_full_run() {
    fuzz(200_000);
}

fn fuzz(n: usize) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    // The first call compiles the pattern tables; time only the analysis itself.
    let _ = classify("rm -rf / && curl x | sh");
    let mut slowest = (Duration::ZERO, String::new());
    for i in 0..n {
        let cmd = if i % 2 == 0 {
            mutate(&mut rng)
        } else {
            random_pieces(&mut rng)
        };
        let started = Instant::now();
        let _ = classify(&cmd);
        let took = started.elapsed();
        if took > slowest.0 {
            slowest = (took, cmd);
        }
    }
    // Speed belongs in benchmarks, not assertions: report the slowest input only.
    eprintln!("slowest of {n} inputs: {:?} for {:?}", slowest.0, slowest.1);
}

#[test]
fn deep_nesting_is_bounded() {
    // The nesting limit makes this return (the test runner's timeout would catch a hang).
    let deep = format!("{}rm -rf /{}", "$(".repeat(5000), ")".repeat(5000));
    let v = classify(&deep);
    assert!(!matches!(v, Verdict::Safe));
    let quotes = format!("bash -c {}", "\"$(bash -c ".repeat(300));
    let _ = classify(&quotes);
}
