use std::path::{Path, PathBuf};

/// The Hermes home directory (`HERMES_HOME`, default `~/.hermes`) and the paths inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HermesHome {
    root: PathBuf,
}

impl HermesHome {
    /// A home rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// Resolves the home from `HERMES_HOME` or `$HOME/.hermes` in the given environment.
    pub fn from_env(hermes_home: Option<&str>, home: Option<&str>) -> Option<Self> {
        match hermes_home.map(str::trim).filter(|s| !s.is_empty()) {
            Some(h) => Some(Self::new(expand_tilde(h, home))),
            None => home.map(|h| Self::new(Path::new(h).join(".hermes"))),
        }
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `config.yaml`.
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.yaml")
    }

    /// `.env`.
    pub fn env_file(&self) -> PathBuf {
        self.root.join(".env")
    }

    /// `state.db`, the session store.
    pub fn state_db(&self) -> PathBuf {
        self.root.join("state.db")
    }

    /// `memories/`.
    pub fn memories_dir(&self) -> PathBuf {
        self.root.join("memories")
    }

    /// `skills/`.
    pub fn skills_dir(&self) -> PathBuf {
        self.root.join("skills")
    }

    /// `context_length_cache.yaml`: context windows confirmed by providers.
    pub fn context_length_cache(&self) -> PathBuf {
        self.root.join("context_length_cache.yaml")
    }

    /// `cache/`: data that can be rebuilt at any time (the reference keeps its caches here too).
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// `models/`, where local GGUF files live.
    pub fn models_dir(&self) -> PathBuf {
        self.root.join("models")
    }

    /// `logs/`.
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// `SOUL.md`, the user's identity override.
    pub fn soul_file(&self) -> PathBuf {
        self.root.join("SOUL.md")
    }
}

fn expand_tilde(path: &str, home: Option<&str>) -> PathBuf {
    match (path.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(format!("{home}{rest}"))
        }
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hermes_home_wins_then_home_dot_hermes() {
        let h = HermesHome::from_env(Some("/x/h"), Some("/home/u")).unwrap();
        assert_eq!(h.config_file(), PathBuf::from("/x/h/config.yaml"));
        let h = HermesHome::from_env(None, Some("/home/u")).unwrap();
        assert_eq!(h.state_db(), PathBuf::from("/home/u/.hermes/state.db"));
        let h = HermesHome::from_env(Some("~/alt"), Some("/home/u")).unwrap();
        assert_eq!(h.root(), Path::new("/home/u/alt"));
        assert!(HermesHome::from_env(Some("  "), None).is_none());
    }
}
