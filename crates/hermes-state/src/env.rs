use std::collections::BTreeMap;
use std::path::Path;

/// A snapshot of environment variables the libraries may consult. Built once at
/// the binary's edge (process env, then `$HERMES_HOME/.env` on top, as the
/// reference does) and passed down, so nothing below reads global state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<String, String>,
}

impl Env {
    /// An environment holding exactly these variables.
    pub fn from_pairs<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// Layers the variables of a dotenv file over these; values from the file win.
    /// A missing file is not an error. Returns the names that were set.
    pub fn load_dotenv(&mut self, path: &Path) -> Result<Vec<String>, dotenvy::Error> {
        let iter = match dotenvy::from_path_iter(path) {
            Ok(iter) => iter,
            Err(e) if e.not_found() => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut names = Vec::new();
        for item in iter {
            let (k, v) = item?;
            names.push(k.clone());
            self.vars.insert(k, v);
        }
        Ok(names)
    }

    /// A variable's value, treating empty as unset.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    /// Sets a variable.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.vars.insert(key.into(), value.into());
    }

    /// All variables.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotenv_overrides_process_values_and_missing_file_is_fine() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(
            &path,
            "# comment\nOPENROUTER_API_KEY=sk-or-file\nQUOTED=\"a b\"\nexport X=1\n",
        )
        .unwrap();
        let mut env = Env::from_pairs([("OPENROUTER_API_KEY", "stale"), ("KEEP", "k")]);
        let set = env.load_dotenv(&path).unwrap();
        assert_eq!(set.len(), 3);
        assert_eq!(env.get("OPENROUTER_API_KEY"), Some("sk-or-file"));
        assert_eq!(env.get("QUOTED"), Some("a b"));
        assert_eq!(env.get("X"), Some("1"));
        assert_eq!(env.get("KEEP"), Some("k"));
        assert!(
            env.load_dotenv(&dir.path().join("nope"))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn empty_values_count_as_unset() {
        let env = Env::from_pairs([("A", " ")]);
        assert_eq!(env.get("A"), None);
    }
}
