//! Disks and the files whose loss takes the machine with it: `dd` to a
//! block device, `shred`/`truncate`/`wipefs` of disks, account files and
//! credential or start-up files.

use super::detect::Acc;
use super::expand::{Env, Field};
use super::patterns::SENSITIVE;

/// Files whose loss locks everyone out of the machine.
pub(crate) const ACCOUNT_FILES: &[&str] = &[
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "/etc/sudoers",
];

/// `dd of=` a block device, or a device that cannot be known.
pub(crate) fn check_dd(args: &[Field], acc: &mut Acc) {
    for a in args {
        let Some(target) = a.text.strip_prefix("of=") else {
            continue;
        };
        if !a.certain && !target.contains('/') {
            acc.hard("dd to a device that cannot be known");
        } else if target.starts_with("/dev/") && !is_harmless_device(target) {
            acc.hard("dd to raw block device");
        }
    }
}

/// `shred`/`truncate`/`wipefs` of disks and system account files.
pub(crate) fn check_wipe(cmd: &str, args: &[Field], env: &Env, acc: &mut Acc) {
    for a in args.iter().filter(|a| !a.text.starts_with('-')) {
        let t = a.text.as_str();
        let device = t.starts_with("/dev/") && !is_harmless_device(t);
        let accounts = ACCOUNT_FILES.contains(&t);
        if device || accounts {
            acc.hard(if cmd == "truncate" {
                "truncate of a disk or system account file"
            } else {
                "wipe of a disk or system account file"
            });
        } else if t.starts_with("/etc/")
            || t.starts_with("/private/etc/")
            || SENSITIVE
                .as_ref()
                .is_some_and(|re| re.is_match(&home_folded(t, env)))
        {
            // Emptying a credential, SSH or shell start-up file loses it as surely.
            acc.danger("truncate or wipe of a system or credential file");
        }
    }
}

/// `path` with the user's resolved home written `~`, as the sensitive-path
/// patterns spell it.
fn home_folded(path: &str, env: &Env) -> String {
    match env.home.as_deref().and_then(|h| path.strip_prefix(h)) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("~{rest}"),
        _ => path.to_owned(),
    }
}

pub(crate) fn is_harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/zero" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/full"
    ) || path.starts_with("/dev/fd/")
        || path.starts_with("/dev/pts/")
}
