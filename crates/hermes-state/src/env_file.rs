//! Setting and removing one variable of `HERMES_HOME/.env` in place: the
//! other lines, comments included, stay as they are; the file is owner-only.

use std::path::Path;

/// Sets `key` to `value` (`None` removes it) in the `.env` file at `path`,
/// created when missing. Returns whether the file changed.
pub fn set_var(path: &Path, key: &str, value: Option<&str>) -> std::io::Result<bool> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let edited = with_var(&text, key, value);
    if edited == text {
        return Ok(false);
    }
    hermes_fs::write_atomic(path, edited.as_bytes(), hermes_fs::Access::Private)?;
    Ok(true)
}

/// `text` with `key`'s line replaced (the first one; later duplicates are
/// dropped), removed, or appended.
pub fn with_var(text: &str, key: &str, value: Option<&str>) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut done = false;
    for line in text.lines() {
        if defines(line, key) {
            if let (Some(v), false) = (value, done) {
                out.push_str(&format!("{key}={}\n", quoted(v)));
            }
            done = true;
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if let (Some(v), false) = (value, done) {
        out.push_str(&format!("{key}={}\n", quoted(v)));
    }
    out
}

/// Whether `line` assigns `key` (`KEY=…` or `export KEY=…`).
fn defines(line: &str, key: &str) -> bool {
    let line = line.trim_start();
    let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
    line.strip_prefix(key)
        .is_some_and(|rest| rest.trim_start().starts_with('='))
}

/// The value as dotenv reads it back: quoted when it holds a space, `#`, a
/// quote, a backslash or `$` (single quotes are literal; double quotes need
/// escapes, so they are the fallback for values holding a single quote).
fn quoted(value: &str) -> String {
    let special = |c: char| c.is_whitespace() || matches!(c, '#' | '"' | '\'' | '\\' | '$');
    if !value.chars().any(special) {
        value.to_owned()
    } else if !value.contains('\'') {
        format!("'{value}'")
    } else {
        let escaped = value
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('$', "\\$");
        format!("\"{escaped}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_appends_and_removes_keeping_other_lines() {
        let text = "# keys\nOPENAI_API_KEY=old\nexport OTHER=1\n";
        assert_eq!(
            with_var(text, "OPENAI_API_KEY", Some("new")),
            "# keys\nOPENAI_API_KEY=new\nexport OTHER=1\n"
        );
        assert_eq!(
            with_var(text, "NEW_KEY", Some("a b#c")),
            "# keys\nOPENAI_API_KEY=old\nexport OTHER=1\nNEW_KEY='a b#c'\n"
        );
        assert_eq!(
            with_var(text, "OTHER", None),
            "# keys\nOPENAI_API_KEY=old\n"
        );
        assert_eq!(with_var(text, "OPENAI_API_KEY_2", None), text);
    }

    #[test]
    fn written_values_read_back_through_dotenv() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        for value in [
            "plain",
            "with space",
            "q\"uote",
            "hash#tag",
            "back\\slash",
            "$HOME",
            "it's $5",
        ] {
            set_var(&path, "K", Some(value)).unwrap();
            let mut env = crate::Env::default();
            env.load_dotenv(&path).unwrap();
            assert_eq!(env.get("K"), Some(value), "{value}");
        }
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
