//! The pattern tables: which canonical command lines are hardline (never run)
//! and which are dangerous (need approval). Descriptions follow the reference
//! so allowlist entries written by it keep working.

use std::sync::LazyLock;

use regex::Regex;

/// A compiled rule and the description shown to the user and the model.
pub struct Rule {
    /// Matched against a canonical line (`argv` joined by spaces, wrappers removed).
    pub re: Regex,
    /// Human-readable reason; also the allowlist key.
    pub description: &'static str,
}

fn rules(table: &[(&str, &'static str)]) -> Vec<Rule> {
    table
        .iter()
        .filter_map(|(pat, description)| {
            // The table is static and covered by tests; a bad entry is skipped, not a panic.
            Regex::new(pat).ok().map(|re| Rule { re, description })
        })
        .collect()
}

/// Whole-text rules that are hardline wherever they appear.
pub static RAW_HARDLINE: LazyLock<Vec<Rule>> =
    LazyLock::new(|| rules(&[(r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;?\s*:", "fork bomb")]));

/// Whole-text rules that need approval wherever they appear (SQL travels in quotes).
pub static RAW_DANGEROUS: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    rules(&[
        (r"(?i)\bDROP\s+(TABLE|DATABASE)\b", "SQL DROP"),
        (r"(?i)\bTRUNCATE\s+(TABLE)?\s*\w", "SQL TRUNCATE"),
    ])
});

/// `DELETE FROM` (checked per line for a missing `WHERE`, which the regex crate cannot look ahead for).
pub static SQL_DELETE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\bDELETE\s+FROM\b").ok());
/// `WHERE` on the same line as a `DELETE FROM`.
pub static SQL_WHERE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(?i)\bWHERE\b").ok());

/// Per-command hardline rules (the canonical line starts at the command word).
pub static HARDLINE: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    rules(&[
        (r"^mkfs(\.[a-z0-9]+)?(\s|$)", "format filesystem (mkfs)"),
        (
            r"^dd\s.*\bof=/dev/(sd|nvme|hd|mmcblk|vd|xvd)[a-z0-9]*",
            "dd to raw block device",
        ),
        (
            r"^(shutdown|reboot|halt|poweroff)(\s|$)",
            "system shutdown/reboot",
        ),
        (r"^init\s+[06](\s|$)", "init 0/6 (shutdown/reboot)"),
        (
            r"^systemctl\s+(-\S+\s+)*(poweroff|reboot|halt|kexec)\b",
            "systemctl poweroff/reboot",
        ),
        (r"^telinit\s+[06](\s|$)", "telinit 0/6 (shutdown/reboot)"),
        (
            r"^tee\s(.*\s)?/dev/(sd|nvme|hd|mmcblk|vd|xvd)[a-z0-9]*(\s|$)",
            "redirect to raw block device",
        ),
    ])
});

/// Paths the reference treats as system configuration (`/etc` and its macOS mirror).
const SYSTEM_CONFIG: &str = r"(?:/etc/|/private/(?:etc|var|tmp|home)/)";
/// Credential, SSH, shell start-up and Hermes files whose overwrite needs approval.
pub const SENSITIVE_TARGET: &str = r"(?i)^(?:/etc/|/private/(?:etc|var|tmp|home)/|/dev/sd|(?:~|\$home|\$\{home\})/\.ssh(?:/|$)|(?:~|\$home|\$\{home\})/\.(?:bashrc|zshrc|profile|bash_profile|zprofile|netrc|pgpass|npmrc|pypirc)\b|(?:~/\.hermes/|(?:\$home|\$\{home\})/\.hermes/|(?:\$hermes_home|\$\{hermes_home\})/)(?:\.env|config\.yaml)\b)";

/// Compiled [`SENSITIVE_TARGET`].
pub static SENSITIVE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(SENSITIVE_TARGET).ok());

/// Per-command rules that need approval.
pub static DANGEROUS: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let sys = SYSTEM_CONFIG;
    let owned: Vec<(String, &'static str)> = vec![
        (r"^rm\s+(-\S*\s+)*/".into(), "delete in root path"),
        (r"^rm\s+(.*\s)?-[a-zA-Z]*[rR]".into(), "recursive delete"),
        (r"^rm\s+(.*\s)?--recursive\b".into(), "recursive delete (long flag)"),
        (
            r"(?i)^cmd(\.exe)?\s+/(c|k)\s+.*\b(del|erase|rd|rmdir)\b".into(),
            "Windows cmd destructive delete",
        ),
        (
            r#"(?i)^(powershell|pwsh)(\.exe)?(\s+-\S+)*\s+(-(command|c)\s+)?["']?(remove-item|rmdir|erase|del|rd|ri|rm)\b"#.into(),
            "Windows PowerShell destructive delete",
        ),
        (
            r"(?i)^(powershell|pwsh)(\.exe)?\b.*\s-(encodedcommand|enc|e)\b".into(),
            "PowerShell encoded command execution",
        ),
        (
            r"^chmod\s+(-\S*\s+)*(777|666|[oa]\+[rwxX]*w[rwxX]*)(\s|$)".into(),
            "world/other-writable permissions",
        ),
        (
            r"^chmod\s+--recursive\b.*(777|666|[oa]\+[rwxX]*w)".into(),
            "recursive world/other-writable (long flag)",
        ),
        (r"(?i)^chown\s+(-\S*)?R\s+root".into(), "recursive chown to root"),
        (r"^chown\s+--recur[a-z]*\b.*root".into(), "recursive chown to root (long flag)"),
        (r"^chown\s+(.*\s)?(-[a-zA-Z]*R|--recursive)\b".into(), "recursive ownership change"),
        (r"^dd\s+.*if=".into(), "disk copy"),
        (
            r"^systemctl\s+(-\S+\s+)*(stop|restart|disable|mask)\b".into(),
            "stop/restart system service",
        ),
        (r"^pkill\s+-9\b".into(), "force kill processes"),
        (
            r"^killall\s+(-\S*\s+)*-(9|KILL|SIGKILL)\b".into(),
            "force kill processes (killall -KILL)",
        ),
        (
            r"^killall\s+(-\S*\s+)*-s\s+(KILL|SIGKILL|9)\b".into(),
            "force kill processes (killall -s KILL)",
        ),
        (r"^killall\s+(-\S*\s+)*-r\b".into(), "kill processes by regex (killall -r)"),
        (r"^xargs\s+.*\brm\b".into(), "xargs with rm"),
        (r"^find\b.*\s-exec(dir)?\s+(/\S*/)?rm\b".into(), "find -exec/-execdir rm"),
        (r"^find\b.*\s-delete\b".into(), "find -delete"),
        (
            r"^hermes\s+(-{1,2}\S+(\s+\S+)?\s+)*gateway\s+(stop|restart)\b".into(),
            "stop/restart hermes gateway (kills running agents)",
        ),
        (
            r"^hermes\s+update\b".into(),
            "hermes update (restarts gateway, kills running agents)",
        ),
        (
            r"^docker\s+compose\s+(restart|stop|kill|down)\b".into(),
            "docker compose restart/stop/kill/down (container lifecycle)",
        ),
        (
            r"^docker\s+(restart|stop|kill)\b".into(),
            "docker restart/stop/kill (container lifecycle)",
        ),
        (
            r"^(pkill|killall)\b.*\b(hermes|gateway|cli\.py)\b".into(),
            "kill hermes/gateway process (self-termination)",
        ),
        (
            r"^kill\b.*\$\(\s*(pgrep|pidof)\b".into(),
            "kill process via pgrep/pidof expansion (self-termination)",
        ),
        (
            r"^kill\b.*`\s*(pgrep|pidof)\b".into(),
            "kill process via backtick pgrep/pidof expansion (self-termination)",
        ),
        (
            r"^launchctl\s+(stop|kickstart|bootout|unload|kill|disable|remove)\b.*\b(hermes|ai\.hermes)\b".into(),
            "stop/restart hermes launchd service (kills running agents)",
        ),
        (format!(r"^sed\s+-\S*i.*\s{sys}"), "in-place edit of system config"),
        (
            format!(r"^sed\s+--in-place\b.*\s{sys}"),
            "in-place edit of system config (long flag)",
        ),
        (
            r"^git\s+reset\s+(.*\s)?--h(a(r(d)?)?)?(\s|$)".into(),
            "git reset --hard (destroys uncommitted changes)",
        ),
        (
            r"^git\s+push\b.*\s--forc[a-z]*\b".into(),
            "git force push (rewrites remote history)",
        ),
        (
            r"^git\s+push\b.*\s-[a-zA-Z]*f[a-zA-Z]*(\s|$)".into(),
            "git force push short flag (rewrites remote history)",
        ),
        (
            r"^git\s+push\b.*\s\+\S+".into(),
            "git force push via +refspec (rewrites remote history)",
        ),
        (
            r"^git\s+clean\s+(.*\s)?-[a-zA-Z]*f".into(),
            "git clean with force (deletes untracked files)",
        ),
        (r"^git\s+branch\s+(.*\s)?-D(\s|$)".into(), "git branch force delete"),
        (
            r"^git\s+branch\b.*\s(-d|--delete)\b.*\s(-f|--force)\b".into(),
            "git branch force delete (long flags)",
        ),
        (
            r"^git\s+branch\b.*\s(-f|--force)\b.*\s(-d|--delete)\b".into(),
            "git branch force delete (long flags, force-first)",
        ),
        (
            r"^(eval|source|\.)\s.*(\$\(\s*|`\s*)(curl|wget)\b".into(),
            "execute remote content via command substitution",
        ),
        (
            r"^(bash|sh|zsh|ksh|dash)\s+(<\s*)?<\(\s*(curl|wget)\b".into(),
            "execute remote script via process substitution",
        ),
    ];
    let table: Vec<(&str, &'static str)> = owned.iter().map(|(p, d)| (p.as_str(), *d)).collect();
    rules(&table)
});

/// Root-equivalent paths: `/`, `//`, `/.`, `/..`, `/./..`, optionally with a glob.
pub static ROOT_PATH: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^/(?:(?:\.\.?)?/)*(?:\.\.?)?\**$").ok());
/// Protected top-level system directories, optionally with a trailing `/` or `/*`.
pub static SYSTEM_DIR: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^/+(?:home|root|etc|usr|var|bin|sbin|boot|lib|lib64|opt|dev|proc|sys|srv|private|System|Users|Library|Applications)/*\**$",
    )
    .ok()
});
/// The user's home directory spelled as `~`, `$HOME` or `${HOME}`.
pub static HOME_PATH: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^(?:~|\$HOME|\$\{HOME\})/*\**$").ok());
/// Raw block devices.
pub static BLOCK_DEVICE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^/dev/(sd|nvme|hd|mmcblk|vd|xvd)[a-z0-9]*$").ok());

/// Python/Perl/Ruby/Node calls that run a shell string: `os.system("…")`, `system '…'`, `execSync("…")`.
pub static INTERP_SHELL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"\b(?:os\.system|os\.popen|subprocess\.(?:run|call|Popen|check_call|check_output|getoutput|getstatusoutput)|system|exec|execSync|spawnSync|`)\s*\(?\s*(?:\[\s*)?(?:"([^"]*)"|'([^']*)')"#).ok()
});
/// The string items of a Python/JS list literal passed as argv (`["rm", "-rf", "/"]`).
pub static ARGV_LIST: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"\[\s*((?:["'][^"']*["']\s*,?\s*)+)\]"#).ok());
/// One quoted item in an argv list.
pub static QUOTED_ITEM: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"["']([^"']*)["']"#).ok());
