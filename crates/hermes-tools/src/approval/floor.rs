//! The whole-string floor: the reference's pattern table run over the entire
//! command text, whatever the parser concluded. The parser is precise about
//! what it understands; the floor catches what it does not (an `rm -rf /`
//! inside an `awk` program, a tool's string argument, a wrapper nobody
//! taught it). Anything the floor flags is at least dangerous: it never
//! makes a command hardline on its own, so a quoted commit message that
//! mentions `rm -rf /` can still be approved.
//!
//! Descriptions are the reference's, so allowlist entries it wrote match.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Regex, RegexSet};

use super::detect::Acc;
use super::patterns::{SQL_DELETE, SQL_WHERE};

/// Text the reference's `_SENSITIVE_WRITE_TARGET` names (lower-cased input).
const SYSTEM_CONFIG: &str = r"(?:/etc/|/private/(?:etc|var|tmp|home)/)";
const HOME: &str = r"(?:~|\$home|\$\{home\})";
const HERMES: &str =
    r"(?:~/\.hermes/|(?:\$home|\$\{home\})/\.hermes/|(?:\$hermes_home|\$\{hermes_home\})/)";
const SHELL_RC: &str = r"/\.(?:bashrc|zshrc|profile|bash_profile|zprofile)\b";
const CREDENTIALS: &str = r"/\.(?:netrc|pgpass|npmrc|pypirc)\b";
const PROJECT_ENV: &str = r#"(?:(?:/|\.{1,2}/)?(?:[^\s/"'`]+/)*\.env(?:\.[^/\s"'`]+)*)"#;
const PROJECT_CONFIG: &str = r#"(?:(?:/|\.{1,2}/)?(?:[^\s/"'`]+/)*config\.yaml)"#;
/// The end of a written path (the reference's look-ahead, consumed here).
const BOUNDARY: &str = r#"(?:[\s;&|<>"']|$)"#;
/// A command separator or the end: the destination is the last word.
const TAIL: &str = r"(?:\s*(?:&&|\|\||;).*)?$";

fn sensitive_target() -> String {
    format!(
        r"(?:{SYSTEM_CONFIG}|/dev/sd|{HOME}/\.ssh(?:/|$)|{HERMES}\.env\b|{HERMES}config\.yaml\b|{HOME}{SHELL_RC}|{HOME}{CREDENTIALS})"
    )
}

fn user_sensitive_target() -> String {
    format!(r"(?:{HOME}/\.ssh(?:/|$)|{HOME}{SHELL_RC}|{HOME}{CREDENTIALS})")
}

fn table() -> Vec<(String, &'static str)> {
    // Order is the reference's: the first row that matches names the reason.
    [
        deletes_and_permissions(),
        services_and_pipes(),
        protected_writes(),
        hermes_and_containers(),
        copies_and_edits(),
        git_and_sudo(),
        hardline_rows(),
    ]
    .concat()
}

/// The reference's deletes, permission changes, disks and SQL.
fn deletes_and_permissions() -> Vec<(String, &'static str)> {
    vec![
        (r"\brm\s+(?:-\S*\s+)*/".into(), "delete in root path"),
        (r"\brm\s+-\S*r".into(), "recursive delete"),
        (r"\brm\s+--recursive\b".into(), "recursive delete (long flag)"),
        (
            r"\bcmd(?:\.exe)?\s+/(?:c|k)\s+.*\b(?:del|erase|rd|rmdir)\b".into(),
            "Windows cmd destructive delete",
        ),
        (
            r#"\b(?:powershell|pwsh)(?:\.exe)?\b(?:\s+-\S+)*\s+(?:-(?:command|c)\s+)?["']?(?:remove-item|rmdir|erase|del|rd|ri|rm)\b"#.into(),
            "Windows PowerShell destructive delete",
        ),
        (
            r"\b(?:powershell|pwsh)(?:\.exe)?\b.*\s-(?:encodedcommand|enc|e)\b".into(),
            "PowerShell encoded command execution",
        ),
        (
            r"\bchmod\s+(?:-\S*\s+)*(?:777|666|o\+[rwx]*w|a\+[rwx]*w)\b".into(),
            "world/other-writable permissions",
        ),
        (
            r"\bchmod\s+--recursive\b.*(?:777|666|o\+[rwx]*w|a\+[rwx]*w)".into(),
            "recursive world/other-writable (long flag)",
        ),
        (r"\bchown\s+(?:-\S*)?r\s+root".into(), "recursive chown to root"),
        (r"\bchown\s+--recur[a-z]*\b.*root".into(), "recursive chown to root (long flag)"),
        (r"\bmkfs\b".into(), "format filesystem"),
        (r"\bdd\s+.*if=".into(), "disk copy"),
        (r">\s*/dev/sd".into(), "write to block device"),
        (r"\bdrop\s+(?:table|database)\b".into(), "SQL DROP"),
        (r"\btruncate\s+(?:table)?\s*\w".into(), "SQL TRUNCATE"),
    ]
}

/// Services and processes stopped, and content piped into shells.
fn services_and_pipes() -> Vec<(String, &'static str)> {
    let shells = r"\b(?:bash|sh|zsh|ksh|dash)\b";
    vec![
        (format!(r">\s*{SYSTEM_CONFIG}"), "overwrite system config"),
        (
            r"\bsystemctl\s+(?:-\S+\s+)*(?:stop|restart|disable|mask)\b".into(),
            "stop/restart system service",
        ),
        (r"\bkill\s+-9\s+-1\b".into(), "kill all processes"),
        (r"\bpkill\s+-9\b".into(), "force kill processes"),
        (
            r"\bkillall\s+(?:-\S*\s+)*-(?:9|kill|sigkill)\b".into(),
            "force kill processes (killall -KILL)",
        ),
        (
            r"\bkillall\s+(?:-\S*\s+)*-s\s+(?:kill|sigkill|9)\b".into(),
            "force kill processes (killall -s KILL)",
        ),
        (
            r"\bkillall\s+(?:-\S*\s+)*-r\b".into(),
            "kill processes by regex (killall -r)",
        ),
        (
            r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:".into(),
            "fork bomb",
        ),
        (
            r"\b(?:curl|wget)\b.*\|\s*(?:[/\w]*/)?(?:ba)?sh(?:\s|$|-c)".into(),
            "pipe remote content to shell",
        ),
        (
            r"\b(?:bash|sh|zsh|ksh)\s+<\s*<?\s*\(\s*(?:curl|wget)\b".into(),
            "execute remote script via process substitution",
        ),
        (
            r"(?:\beval\b|\bsource\b|\.)\s*(?:\$\(\s*|`\s*)(?:curl|wget)\b".into(),
            "execute remote content via command substitution",
        ),
        (
            format!(r"\b(?:base64|base32|base16)\s+(?:-d|--decode)\b.*\|\s*{shells}"),
            "pipe decoded content to shell (possible command obfuscation)",
        ),
        (
            format!(r"\bxxd\s+-r\b.*\|\s*{shells}"),
            "pipe xxd-decoded content to shell (possible command obfuscation)",
        ),
        (
            format!(r"\becho\b[^|]*\|\s*\btr\b[^|]*\|\s*{shells}"),
            "pipe tr-transformed output to shell (possible command obfuscation)",
        ),
        (
            format!(r"\bopenssl\b.*\b(?:base64|enc)\b[^|]*\s+-d\b[^|]*\|\s*{shells}"),
            "pipe openssl-decoded content to shell (possible command obfuscation)",
        ),
    ]
}

/// Writes into system, credential, project and Hermes files.
fn protected_writes() -> Vec<(String, &'static str)> {
    let sensitive = sensitive_target();
    let project = format!("(?:{PROJECT_ENV}|{PROJECT_CONFIG})");
    vec![
        (
            format!(r#"\btee\b.*["']?{sensitive}"#),
            "overwrite system file via tee",
        ),
        (
            format!(r#">>?\s*["']?{sensitive}"#),
            "overwrite system file via redirection",
        ),
        (
            format!(r#"\btee\b.*["']?{project}["']?{BOUNDARY}"#),
            "overwrite project env/config via tee",
        ),
        (
            format!(r#">>?\s*["']?{project}["']?{BOUNDARY}"#),
            "overwrite project env/config via redirection",
        ),
        (r"\bxargs\s+.*\brm\b".into(), "xargs with rm"),
        (
            r"\bfind\b.*-exec(?:dir)?\s+(?:/\S*/)?rm\b".into(),
            "find -exec/-execdir rm",
        ),
        (r"\bfind\b.*-delete\b".into(), "find -delete"),
    ]
}

/// Hermes' own gateway and containers stopped, killed or started outside systemd.
fn hermes_and_containers() -> Vec<(String, &'static str)> {
    vec![
        (
            r"\bhermes\s+(?:-{1,2}\S+(?:\s+\S+)?\s+)*gateway\s+(?:stop|restart)\b".into(),
            "stop/restart hermes gateway (kills running agents)",
        ),
        (
            r"\bhermes\s+update\b".into(),
            "hermes update (restarts gateway, kills running agents)",
        ),
        (
            r"\bdocker\s+compose\s+(?:restart|stop|kill|down)\b".into(),
            "docker compose restart/stop/kill/down (container lifecycle)",
        ),
        (
            r"\bdocker\s+(?:restart|stop|kill)\b".into(),
            "docker restart/stop/kill (container lifecycle)",
        ),
        (
            r"gateway\s+run\b.*(?:&\s*$|&\s*;|\bdisown\b|\bsetsid\b)".into(),
            "start gateway outside systemd (use 'systemctl --user restart hermes-gateway')",
        ),
        (
            r"\bnohup\b.*gateway\s+run\b".into(),
            "start gateway outside systemd (use 'systemctl --user restart hermes-gateway')",
        ),
        (
            r"\b(?:pkill|killall)\b.*\b(?:hermes|gateway|cli\.py)\b".into(),
            "kill hermes/gateway process (self-termination)",
        ),
        (
            r"\bkill\b.*\$\(\s*(?:pgrep|pidof)\b".into(),
            "kill process via pgrep/pidof expansion (self-termination)",
        ),
        (
            r"\bkill\b.*`\s*(?:pgrep|pidof)\b".into(),
            "kill process via backtick pgrep/pidof expansion (self-termination)",
        ),
        (
            r"\blaunchctl\s+(?:stop|kickstart|bootout|unload|kill|disable|remove)\b.*\b(?:hermes|ai\.hermes)\b".into(),
            "stop/restart hermes launchd service (kills running agents)",
        ),
    ]
}

/// Copies into and in-place edits of protected files.
fn copies_and_edits() -> Vec<(String, &'static str)> {
    let sensitive = sensitive_target();
    let user = user_sensitive_target();
    let project = format!("(?:{PROJECT_ENV}|{PROJECT_CONFIG})");
    let hermes_files = format!(r"(?:{HERMES}config\.yaml\b|{HERMES}\.env\b)");
    vec![
        (
            format!(r"\b(?:cp|mv|install)\b.*\s{SYSTEM_CONFIG}"),
            "copy/move file into system config path",
        ),
        (
            format!(r#"\b(?:cp|mv|install)\b.*\s["']?{project}["']?{TAIL}"#),
            "overwrite project env/config file",
        ),
        (
            format!(r#"\b(?:cp|mv|install)\b.*\s["']?{sensitive}[^\s"']*["']?{TAIL}"#),
            "copy/move file into sensitive credential/SSH/shell-rc path",
        ),
        (
            format!(r#"\bsed\s+-\S*i.*{user}[^\s"']*"#),
            "in-place edit of sensitive credential/SSH/shell-rc path",
        ),
        (
            format!(r#"\bsed\s+--in-place\b.*{user}[^\s"']*"#),
            "in-place edit of sensitive credential/SSH/shell-rc path (long flag)",
        ),
        (
            format!(r#"\b(?:perl|ruby)\b.*(?:^|\s)-\S*i\b.*{user}[^\s"']*"#),
            "in-place edit of sensitive credential/SSH/shell-rc path (perl/ruby)",
        ),
        (
            format!(r"\bsed\s+-\S*i.*\s{SYSTEM_CONFIG}"),
            "in-place edit of system config",
        ),
        (
            format!(r"\bsed\s+--in-place\b.*\s{SYSTEM_CONFIG}"),
            "in-place edit of system config (long flag)",
        ),
        (
            format!(r"\bsed\s+-\S*i.*{hermes_files}"),
            "in-place edit of Hermes config/env",
        ),
        (
            format!(r"\bsed\s+--in-place\b.*{hermes_files}"),
            "in-place edit of Hermes config/env (long flag)",
        ),
        (
            format!(r"\b(?:perl|ruby)\b.*(?:^|\s)-\S*i\b.*{hermes_files}"),
            "in-place edit of Hermes config/env (perl/ruby)",
        ),
    ]
}

/// Git history and work lost, scripts run right after chmod, sudo escalation.
fn git_and_sudo() -> Vec<(String, &'static str)> {
    vec![
        (
            r"\b(?:bash|sh|zsh|ksh)\s+<<".into(),
            "shell execution via heredoc",
        ),
        (
            r"\bgit\s+reset\s+--h(?:a(?:r(?:d)?)?)?\b".into(),
            "git reset --hard (destroys uncommitted changes)",
        ),
        (
            r"\bgit\s+push\b.*--forc[a-z]*\b".into(),
            "git force push (rewrites remote history)",
        ),
        (
            r"\bgit\s+push\b.*-f\b".into(),
            "git force push short flag (rewrites remote history)",
        ),
        (
            r"\bgit\s+clean\s+-\S*f".into(),
            "git clean with force (deletes untracked files)",
        ),
        (r"\bgit\s+branch\s+-d\b".into(), "git branch force delete"),
        (
            r"\bgit\s+branch\b[^;|&\n]*?(?:-d\b|--delete\b)[^;|&\n]*?(?:-f\b|--force\b)".into(),
            "git branch force delete (long flags)",
        ),
        (
            r"\bgit\s+branch\b[^;|&\n]*?(?:-f\b|--force\b)[^;|&\n]*?(?:-d\b|--delete\b)".into(),
            "git branch force delete (long flags, force-first)",
        ),
        (
            r"\bchmod\s+\+x\b.*[;&|]+\s*\./".into(),
            "chmod +x followed by immediate execution",
        ),
        (
            r"\bsudo\b[^;|&\n]*?\s+(?:-s\b|--st[a-z]*\b|-a\b|--a[a-z]*\b)".into(),
            "sudo with privilege flag (stdin/askpass/shell/list)",
        ),
        (
            r"\bsudo\b[^;|&\n]*?\s+-[a-z]*[sa][a-z]*\b".into(),
            "sudo with combined-flag privilege escalation",
        ),
        // The reference's hardline table: at least dangerous wherever it appears.
    ]
}

/// The reference's hardline table: at least dangerous wherever it appears.
fn hardline_rows() -> Vec<(String, &'static str)> {
    vec![
        (
            r"\bmkfs(?:\.[a-z0-9]+)?\b".into(),
            "format filesystem (mkfs)",
        ),
        (
            r"\bdd\b[^\n]*\bof=/dev/(?:sd|nvme|hd|mmcblk|vd|xvd)[a-z0-9]*".into(),
            "dd to raw block device",
        ),
        (
            r">\s*/dev/(?:sd|nvme|hd|mmcblk|vd|xvd)[a-z0-9]*\b".into(),
            "redirect to raw block device",
        ),
        (r"\bkill\s+(?:-\S+\s+)*-1\b".into(), "kill all processes"),
    ]
}

/// The compiled floor, one automaton for all rows (input is normalised and
/// lower-cased first), with each row's description by index.
static FLOOR: LazyLock<Option<(RegexSet, Vec<&'static str>)>> = LazyLock::new(|| {
    let (patterns, descriptions): (Vec<String>, Vec<&'static str>) = table()
        .into_iter()
        .map(|(pat, description)| (format!("(?s){pat}"), description))
        .unzip();
    // A static table covered by tests: failing to build disables the floor
    // (the parser still runs) rather than panicking in a tool call.
    RegexSet::new(patterns).ok().map(|set| (set, descriptions))
});

/// Runs the floor over `command`, flagging the first row that matches.
pub(crate) fn apply(command: &str, home: Option<&str>, acc: &mut Acc) {
    let text = prepare(command, home);
    if let Some((set, descriptions)) = FLOOR.as_ref()
        && let Some(first) = set.matches(&text).iter().next()
        && let Some(description) = descriptions.get(first)
    {
        acc.danger(description);
        return;
    }
    if let (Some(del), Some(wh)) = (SQL_DELETE.as_ref(), SQL_WHERE.as_ref())
        && text
            .lines()
            .any(|l| del.find(l).is_some_and(|m| !wh.is_match(&l[m.end()..])))
    {
        acc.danger("SQL DELETE without WHERE");
    }
}

/// The reference's normalisation: escapes, ANSI sequences, NULs, full-width
/// look-alikes, line continuations, empty quotes and `$IFS` undone, the
/// user's home folded to `~`, grep patterns blanked, all lower case.
fn prepare(command: &str, home: Option<&str>) -> String {
    let mut text: String = crate::builtin::terminal::strip_ansi(command)
        .replace('\0', "")
        .replace("\\\r\n", "")
        .replace("\\\n", "");
    text = crate::injection::fold_compat(&text).into_owned();
    if let Some(home) = home.filter(|h| h.matches('/').count() >= 2) {
        text = text.replace(&format!("{home}/"), "~/");
    }
    let text = unescape(&blank_grep_patterns(&text));
    let text = text.replace("''", "").replace("\"\"", "");
    let text = IFS
        .as_ref()
        .map_or(Cow::Borrowed(text.as_str()), |re| {
            re.replace_all(&text, " ")
        })
        .into_owned();
    text.to_lowercase()
}

static IFS: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\$\{IFS\b[^}]*\}|\$IFS\b").ok());

/// `r\m` → `rm` (a backslash before anything but a newline).
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && next != '\n'
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// Search tools' patterns are data, not commands: `grep -r 'rm -rf /'` must
/// not trip the floor. Only the word in pattern position after a
/// grep-family command word is blanked (quoted, or escaped as the shell
/// spells it after expansion: `rm\ -rf\ /`).
fn blank_grep_patterns(text: &str) -> String {
    static GREP: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(
            r#"(?:^|[;&|(\n]\s*|\s)(?:grep|egrep|fgrep|rg|ag|ack|git\s+grep|git\s+log\s+-S|zgrep)((?:\s+-[A-Za-z-]+(?:=\S+)?)*\s+(?:-e\s+)?)('[^'\n]*'|"(?:[^"\\\n]|\\.)*"|(?:[^\s'"\\;&|<>()]|\\.)+)"#,
        )
        .ok()
    });
    let Some(re) = GREP.as_ref() else {
        return text.to_owned();
    };
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for caps in re.captures_iter(text) {
        let Some(pattern) = caps.get(2) else { continue };
        out.push_str(&text[last..pattern.start()]);
        out.push_str(&" ".repeat(pattern.len()));
        last = pattern.end();
    }
    out.push_str(&text[last..]);
    out
}
