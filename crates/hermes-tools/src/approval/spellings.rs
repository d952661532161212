//! Semantics-preserving respellings of commands — quoting, escapes, `$IFS`,
//! `$'…'`, variables, braces, substitutions, wrappers, lists, nested shells —
//! for testing the detector. Self-contained (std only): the stable property
//! test and the cargo-fuzz target `fuzz/fuzz_targets/spellings.rs` share it.
#![allow(dead_code)]

/// What detection must say about a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum K {
    /// Runs without approval.
    Safe,
    /// Needs approval.
    Danger,
    /// Never runs.
    Hard,
}

/// Commands as argv, with what detection must say about them.
pub const BASES: &[(&[&str], K)] = &[
    (&["rm", "-rf", "/"], K::Hard),
    (&["rm", "-rf", "/etc"], K::Hard),
    (&["rm", "-fr", "/usr/"], K::Hard),
    (&["mkfs.ext4", "/dev/sda"], K::Hard),
    (&["dd", "if=/dev/zero", "of=/dev/sda"], K::Hard),
    (&["shutdown", "-h", "now"], K::Hard),
    (&["kill", "-9", "-1"], K::Hard),
    (&["chmod", "-R", "777", "/"], K::Hard),
    (&["find", "/", "-delete"], K::Hard),
    (&["shred", "/dev/sdb"], K::Hard),
    (&["git", "reset", "--hard"], K::Danger),
    (&["rm", "-rf", "build"], K::Danger),
    (&["git", "push", "--force"], K::Danger),
    (&["ls", "-la"], K::Safe),
    (&["echo", "hi"], K::Safe),
    (&["git", "status"], K::Safe),
    (&["cat", "README.md"], K::Safe),
    (&["echo", "rm", "-rf", "/"], K::Danger),
];

/// Where the engine's choices come from (a seeded generator, fuzz input).
pub trait Choices {
    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize;
}

/// A tiny xorshift generator: deterministic, no dependency.
pub struct Rng(pub u64);

impl Choices for Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// Plain words: safe to spell differently without the shell seeing syntax.
pub fn plain(w: &str) -> bool {
    !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-/._=".contains(c))
}

/// One word spelled another way, meaning the same to the shell.
pub fn respell(word: &str, rng: &mut impl Choices) -> String {
    if !plain(word) {
        return format!("'{word}'");
    }
    match rng.below(7) {
        0 => format!("'{word}'"),
        1 => format!("\"{word}\""),
        2 => {
            // Split into two quoted halves: 'r''m'.
            let at = rng.below(word.len() + 1);
            format!("'{}''{}'", &word[..at], &word[at..])
        }
        3 => word.chars().map(|c| format!("\\{c}")).collect(),
        4 => {
            let hex: String = word.bytes().map(|b| format!("\\x{b:02x}")).collect();
            format!("$'{hex}'")
        }
        5 => format!("$(echo {word})"),
        _ => word.to_owned(),
    }
}

/// The whole command spelled another way; `transparent` when the result is
/// the same command in every respect (not wrapped in a shell or `eval`, which
/// detection rightly flags on their own).
pub fn mutate(argv: &[&str], rng: &mut impl Choices) -> (String, bool) {
    let words: Vec<String> = argv.iter().map(|w| respell(w, rng)).collect();
    let joined = match rng.below(4) {
        0 => words.join("${IFS}"),
        1 if argv.iter().all(|w| plain(w)) => format!("{{{}}}", argv.join(",")),
        _ => words.join(" "),
    };
    let all_plain = argv.iter().all(|w| plain(w));
    if rng.below(2) == 0 && all_plain {
        return wrap(argv, &joined, rng);
    }
    match rng.below(12) {
        0 => (format!("X={}; $X {}", argv[0], argv[1..].join(" ")), true),
        1 => (format!("env {joined}"), true),
        2 => (format!("command {joined}"), true),
        3 => (format!("nice -n 5 {joined}"), true),
        4 => (format!("timeout 30 {joined}"), true),
        5 => (format!("true && {joined}"), true),
        6 => (format!("( {joined} )"), true),
        7 => (format!("{{ {joined}; }}"), true),
        8 if all_plain => (format!("sh -c '{}'", argv.join(" ")), false),
        9 if all_plain => (format!("eval '{}'", argv.join(" ")), false),
        10 if all_plain => (format!("echo '{}' | bash", argv.join(" ")), true),
        _ => (joined, true),
    }
}

/// The program-runs-a-command families the gate follows: each runs the
/// command unchanged, so detection must say the same about it.
fn wrap(argv: &[&str], joined: &str, rng: &mut impl Choices) -> (String, bool) {
    let line = argv.join(" ");
    let rest = argv[1..].join(" ");
    let spelled = match rng.below(16) {
        0 => format!("awk 'BEGIN{{system(\"{line}\")}}'"),
        1 => format!("find . -maxdepth 0 -exec {line} \\;"),
        2 => format!("script -qc '{line}' /dev/null"),
        3 => format!("unshare {joined}"),
        4 => format!("setsid {joined}"),
        5 => format!("stdbuf -oL {joined}"),
        6 => format!("ionice -c3 {joined}"),
        7 => format!("flock /tmp/lock {joined}"),
        8 => format!("flock /tmp/lock -c '{line}'"),
        9 => format!("sqlite3 :memory: '.shell {line}'"),
        10 => format!("parallel ::: '{line}'"),
        11 => format!("ssh host '{line}'"),
        12 => format!("docker exec web {joined}"),
        13 => format!("echo {rest} | xargs {}", argv[0]),
        14 => format!("timeout -s KILL 10 {joined}"),
        _ => format!("nsenter -t 1 -m {joined}"),
    };
    (spelled, true)
}
