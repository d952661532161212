//! `$HERMES_HOME/context_length_cache.yaml`: context windows that providers confirmed
//! in their error messages, keyed `model@base_url` as the reference keys them, so the
//! next session starts with the right limit instead of overflowing again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The cache file.
#[derive(Debug, Clone)]
pub struct ContextLengthCache {
    path: PathBuf,
}

fn key(model: &str, base_url: &str) -> String {
    format!("{model}@{}", base_url.trim_end_matches('/'))
}

impl ContextLengthCache {
    /// The cache at `path` (`HermesHome::context_length_cache`).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file it reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn load(&self) -> BTreeMap<String, u64> {
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return BTreeMap::new();
        };
        let Ok(tree) = serde_saphyr::from_str::<Value>(&text) else {
            return BTreeMap::new();
        };
        tree.get("context_lengths")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| {
                        let n = v.as_u64().or_else(|| v.as_f64().map(|f| f as u64))?;
                        Some((k.clone(), n))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The confirmed window for `model` at `base_url` (a trailing `/` either way matches).
    pub fn get(&self, model: &str, base_url: &str) -> Option<u64> {
        let cache = self.load();
        let canonical = key(model, base_url);
        cache
            .get(&canonical)
            .or_else(|| cache.get(&format!("{model}@{base_url}")))
            .or_else(|| cache.get(&format!("{canonical}/")))
            .copied()
    }

    /// Records a confirmed window; other entries are kept.
    pub fn save(&self, model: &str, base_url: &str, length: u64) -> std::io::Result<()> {
        let mut cache = self.load();
        let k = key(model, base_url);
        if cache.get(&k) == Some(&length) {
            return Ok(());
        }
        cache.insert(k, length);
        let mut text = String::from("context_lengths:\n");
        for (k, n) in &cache {
            text.push_str(&format!("  {}: {n}\n", Value::String(k.clone())));
        }
        hermes_fs::write_atomic(&self.path, text.as_bytes(), hermes_fs::Access::Keep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_matches_trailing_slashes() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ContextLengthCache::new(dir.path().join("context_length_cache.yaml"));
        assert_eq!(cache.get("m", "http://h/v1"), None);
        cache.save("m", "http://h/v1/", 32768).unwrap();
        cache.save("other/model", "https://x", 8192).unwrap();
        assert_eq!(cache.get("m", "http://h/v1"), Some(32768));
        assert_eq!(cache.get("m", "http://h/v1/"), Some(32768));
        assert_eq!(cache.get("other/model", "https://x"), Some(8192));
        let text = std::fs::read_to_string(cache.path()).unwrap();
        assert!(text.starts_with("context_lengths:\n"), "{text}");
        assert!(text.contains("\"m@http://h/v1\": 32768"), "{text}");
    }

    #[test]
    fn reads_the_reference_layout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("context_length_cache.yaml");
        // As PyYAML's dump writes it.
        std::fs::write(
            &path,
            "context_lengths:\n  gpt-x@https://api.example.com/v1: 131072\n",
        )
        .unwrap();
        let cache = ContextLengthCache::new(&path);
        assert_eq!(
            cache.get("gpt-x", "https://api.example.com/v1"),
            Some(131072)
        );
        // A damaged file reads as empty and is replaced on the next save.
        std::fs::write(&path, ": : :\n\t[").unwrap();
        assert_eq!(cache.get("gpt-x", "https://api.example.com/v1"), None);
        cache
            .save("gpt-x", "https://api.example.com/v1", 4096)
            .unwrap();
        assert_eq!(cache.get("gpt-x", "https://api.example.com/v1"), Some(4096));
    }
}
