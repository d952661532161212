//! Spellings of destructive commands that a literal reading misses — every
//! family the shell offers for writing one command another way — which must be
//! refused under `--yolo` (hardline), and look-alikes that must still run.

use super::{Verdict, classify, classify_with_home};

/// Commands that must be hardline, by family.
const HARDLINE: &[&str] = &[
    // Whitespace through $IFS.
    "rm${IFS}-rf${IFS}/",
    "rm$IFS-rf$IFS/",
    "rm${IFS}-rf${IFS}/etc",
    "IFS=,;X=rm,-rf,/;$X",
    "IFS=,; CMD=rm,-rf,/etc; $CMD",
    // Quote removal and concatenation.
    "'r''m' -rf /",
    "\"r\"m -rf /",
    "r'm' -rf '/'",
    "'rm' '-rf' '/'",
    // Backslash escapes.
    "\\rm -rf /",
    "r\\m -rf /",
    "\\r\\m \\-\\r\\f \\/",
    // ANSI-C quoting.
    "$'\\x72m' -rf /",
    "$'\\162\\155' -rf /",
    "$'\\x72\\x6d' $'\\x2d\\x72\\x66' $'\\x2f'",
    "$'rm' -rf /",
    // Variables assigned earlier in the same line.
    "X=rm; $X -rf /",
    "X=rm && $X -rf /",
    "X=rm; Y=-rf; $X $Y /",
    "D=/; rm -rf $D",
    "D=/etc; rm -rf \"$D\"",
    "export X=rm; $X -rf /",
    "declare X=rm; $X -rf /",
    "set -- rm -rf /; \"$@\"",
    "${X:-rm} -rf /",
    "rm -rf ${D:-/}",
    "rm -rf \"${HOME:?}\"",
    "rm -rf \"$HOME/\"",
    "for d in /; do rm -rf $d; done",
    "for d in /etc /usr; do rm -rf \"$d\"; done",
    // A command word that cannot be resolved, with a root-level target.
    "$X -rf /",
    "\"$CMD\" -rf /etc",
    "${CMD} -rf ~",
    "$(cat cmd.txt) -rf /",
    // Command substitution producing the command word.
    "$(echo rm) -rf /",
    "`echo rm` -rf /",
    "$(printf rm) -rf /",
    "$(printf '\\x72\\x6d') -rf /",
    "`printf %s rm` -rf /",
    "$(printf mkfs).ext4 /dev/sda",
    "$(echo cm0= | base64 -d) -rf /",
    // Brace expansion.
    "{rm,-rf,/}",
    "rm -rf /{etc,usr}",
    "rm -rf /{tmp/x,}",
    // Globs that reach the root or system directories.
    "rm -rf /*/",
    "rm -rf /[e]tc",
    "rm -rf /?tc",
    "rm -rf /u?r",
    "rm -rf /e*c",
    // Option spellings.
    "rm --recursive --force /",
    "rm -r -f /",
    "rm -fr /",
    "rm -Rf /",
    "rm --no-preserve-root -rf /",
    "rm -rf --no-preserve-root /",
    "rm -rf -- /",
    // Wrappers.
    "env rm -rf /",
    "env -i rm -rf /",
    "env -S 'rm -rf /'",
    "/usr/bin/env rm -rf /",
    "command rm -rf /",
    "exec -a innocent rm -rf /",
    "nice -n 5 rm -rf /",
    "nohup rm -rf / &",
    "timeout -s KILL 5 rm -rf /",
    "stdbuf -o0 rm -rf /",
    "setsid rm -rf /",
    "sudo -nu root rm -rf /",
    "sudo -u root -- rm -rf /",
    "doas rm -rf /",
    "busybox rm -rf /",
    "echo x | xargs rm -rf /",
    "/bin/rm -rf /",
    // Nested shells and scripts fed to them.
    "sh -c 'rm -rf /'",
    "bash -c \"$(echo rm) -rf /\"",
    "eval \"rm -rf /\"",
    "eval $(echo rm -rf /)",
    "bash <<< 'rm -rf /'",
    "bash <<EOF\nrm -rf /\nEOF",
    ". /dev/stdin <<< 'rm -rf /'",
    "source /dev/stdin <<< \"rm -rf /\"",
    "bash <(echo rm -rf /)",
    "sh <(printf 'rm -rf /')",
    ". <(echo rm -rf /etc)",
    "echo 'rm -rf /' | sh",
    "echo cm0gLXJmIC8= | base64 -d | sh",
    "printf 'cm0gLXJmIC8=' | base64 --decode | bash",
    "echo '/ fr- mr' | rev | sh",
    "su -c 'rm -rf /'",
    "watch -n 1 rm -rf /",
    // Functions and aliases defined in the same line.
    "f(){ rm -rf /; }; f",
    "function f { rm -rf /; }; f",
    "alias x='rm -rf /'; x",
    "a(){ a|a& };a",
    "bomb() { bomb | bomb & }; bomb",
    // Every segment of a list, subshells and substitutions.
    "true && rm -rf /",
    "ls || rm -rf /",
    "sleep 1 & rm -rf /",
    "(rm -rf /)",
    "{ rm -rf /; }",
    "echo $(rm -rf /)",
    "x=$(rm -rf /)",
    "ls\nrm -rf /",
    // The working directory.
    "cd / && rm -rf *",
    "cd / ; rm -rf ./*",
    "cd /etc && rm -rf .",
    "cd /usr && rm -rf -- *",
    "cd / && cd etc && rm -rf *",
    // Home.
    "rm -rf ~",
    "rm -rf \"$HOME\"",
    "rm -rf ${HOME}/*",
    // find.
    "find / -delete",
    "find / -exec rm -rf {} +",
    "find /etc -delete",
    "find ~ -delete",
    "sudo find / -type f -delete",
    // Disks and system files.
    "dd if=/dev/zero of=$DEV",
    "dd if=/dev/zero of=/dev/sda bs=1M",
    "shred /dev/sda",
    "shred -n 3 -z /dev/nvme0n1",
    "shred -u /etc/shadow",
    "truncate -s 0 /etc/passwd",
    "wipefs -a /dev/sda",
    "cat x > /dev/sda",
    "m''kfs.ext4 /dev/sdb",
    // Interpreter one-liners and scripts fed to interpreters.
    "python3 -c \"import shutil; shutil.rmtree('/tmp')\"",
    "python3 -c 'import shutil,os; shutil.rmtree(os.path.expanduser(\"~\"))'",
    "python -c \"import os; [os.remove(os.path.join('/etc', f)) for f in os.listdir('/etc')]\"",
    "python3 -c \"from pathlib import Path; import shutil; shutil.rmtree(Path.home())\"",
    "perl -e 'use File::Path; rmtree(\"/\")'",
    "perl -MFile::Path -e 'remove_tree(\"/usr\")'",
    "ruby -e 'require \"fileutils\"; FileUtils.rm_rf(\"/\")'",
    "node -e \"require('fs').rmSync('/', {recursive: true})\"",
    "node -e \"require('fs').rmSync(require('os').homedir(), {recursive:true})\"",
    "php -r 'system(\"rm -rf /\");'",
    "python3 - <<EOF\nimport shutil\nshutil.rmtree('/etc')\nEOF",
    "python3 <<< \"import shutil; shutil.rmtree('/')\"",
    "echo \"import shutil; shutil.rmtree('/')\" | python3",
    "python3 -c \"open('/dev/sda','wb').write(b'x')\"",
];

/// Look-alikes that must not be hardline (they run under `--yolo`); `true` when
/// they are plainly safe (no approval needed at all). Text that merely
/// mentions `rm -rf /` needs approval: the whole-string floor reads it.
const LOOK_ALIKES: &[(&str, bool)] = &[
    ("echo rm -rf /", false),
    ("grep -r rm .", true),
    ("rm -rf ./build", false),
    ("python3 -c \"print(1)\"", false),
    ("git rm file", true),
    ("echo '$IFS'", true),
    ("printf '%s\\n' 'rm -rf /'", false),
    ("echo {rm,-rf,/}", false),
    ("X=rm; echo $X -rf /", false),
    ("ls /etc", true),
    ("ls /*", true),
    ("cat /etc/passwd", true),
    ("find . -name '*.o' -delete", false),
    ("find / -name core -delete", false),
    ("find /tmp -delete", false),
    ("cd / && ls", true),
    ("cd /tmp && rm -rf ./x", false),
    ("rm -rf /tmp/build", false),
    ("rm -rf \"$HOME/.cache/pip\"", false),
    ("dd if=/dev/zero of=./disk.img bs=1M count=1", false),
    ("truncate -s 0 app.log", true),
    ("shred secret.txt", true),
    (
        "python3 -c 'import shutil; shutil.rmtree(\"build\")'",
        false,
    ),
    ("node -e \"console.log(1)\"", false),
    ("bash -c 'echo hi'", false),
    ("echo 'rm -rf /' > notes.txt", false),
    ("alias ll='ls -la'", true),
    ("f(){ ls; }; f", true),
    ("for d in a b; do echo $d; done", true),
    ("git commit -m \"rm -rf / evasions\"", false),
    ("grep -rn 'shutil.rmtree' .", true),
    ("echo $HOME", true),
    ("sudo -u alice ls", true),
    ("env FOO=1 make", true),
    ("timeout 5 cargo test", true),
    ("busybox ls", true),
    ("echo cm0gLXJmIC8= | base64 -d", true),
    ("xargs -n1 echo", true),
    ("$EDITOR notes.txt", false),
    ("for f in *.txt; do rm \"$f\"; done", false),
    ("kill -9 %1", true),
    ("cd ~/project && rm -rf ./dist", false),
    ("X=build; rm -rf \"$X\"", false),
    ("echo \"$(date)\"", true),
    ("ls -la `pwd`", true),
];

#[test]
fn every_spelling_of_a_destructive_command_is_hardline() {
    assert!(HARDLINE.len() >= 80, "{} spellings", HARDLINE.len());
    let missed: Vec<String> = HARDLINE
        .iter()
        .filter_map(|cmd| match classify(cmd) {
            Verdict::Hardline { .. } => None,
            other => Some(format!("{cmd:?}: {other:?}")),
        })
        .collect();
    assert!(
        missed.is_empty(),
        "{} not refused:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

#[test]
fn look_alikes_still_run() {
    assert!(LOOK_ALIKES.len() >= 30);
    let wrong: Vec<String> = LOOK_ALIKES
        .iter()
        .filter_map(|(cmd, plainly_safe)| {
            let got = classify(cmd);
            let ok = match got {
                Verdict::Hardline { .. } => false,
                Verdict::Safe => true,
                Verdict::Dangerous { .. } => !plainly_safe,
            };
            (!ok).then(|| format!("{cmd:?}: {got:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_resolved_home_is_protected_in_every_spelling() {
    let home = Some(std::path::Path::new("/home/alice"));
    for cmd in [
        "rm -rf /home/alice",
        "cd /home/alice && rm -rf *",
        "cd && rm -rf ./*",
        "H=/home/alice; rm -rf \"$H/\"",
    ] {
        assert!(
            matches!(classify_with_home(cmd, home), Verdict::Hardline { .. }),
            "{cmd}"
        );
    }
}
