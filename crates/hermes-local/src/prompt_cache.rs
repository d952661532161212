//! The KV cache of the last long prompt, kept on disk between processes.
//!
//! Every `hermes chat -q` is a new process, and the system prompt with its tool
//! schemas is about a thousand tokens that a small CPU model needs seconds to
//! evaluate. The worker saves llama.cpp's state after evaluating a long stretch
//! of prompt and loads it when it starts, so the next run only evaluates what
//! differs (usually the user's message).

use std::hash::Hasher;
use std::path::{Path, PathBuf};

/// Newly evaluated prompt tokens worth saving for: below this, evaluating
/// again is about as quick as writing the state out.
pub const SAVE_THRESHOLD: usize = 256;

/// Where the state for one model and context size lives. The name carries the
/// model's path, size and modification time, so a replaced or different GGUF
/// never loads another model's state.
pub fn state_file(dir: &Path, model: &Path, n_ctx: u32) -> Option<PathBuf> {
    let meta = std::fs::metadata(model).ok()?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let mut h = Fnv64::default();
    h.write(model.to_string_lossy().as_bytes());
    h.write_u64(meta.len());
    h.write_u64(modified);
    h.write_u32(n_ctx);
    let stem = model
        .file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
    Some(dir.join(format!("{stem}-{:016x}.kv", h.finish())))
}

/// A temporary name next to `path`, renamed over it once fully written, so an
/// interrupted save never leaves a truncated state behind.
pub fn partial_file(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.partial", std::process::id()));
    path.with_file_name(name)
}

/// FNV-1a: stable across Rust releases (the std hasher is not), so a file
/// written by one build is found by the next.
struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv64 {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_name_follows_the_model_and_context() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("tiny.gguf");
        std::fs::write(&model, b"abc").unwrap();
        let a = state_file(dir.path(), &model, 8192).unwrap();
        assert_eq!(a, state_file(dir.path(), &model, 8192).unwrap());
        assert!(
            a.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("tiny-")
        );
        assert_ne!(a, state_file(dir.path(), &model, 4096).unwrap());
        std::fs::write(&model, b"abcd").unwrap();
        assert_ne!(a, state_file(dir.path(), &model, 8192).unwrap());
        assert!(state_file(dir.path(), &dir.path().join("missing.gguf"), 8192).is_none());
        let partial = partial_file(&a);
        assert_eq!(partial.parent(), a.parent());
        assert!(partial.to_string_lossy().ends_with(".partial"));
    }
}
