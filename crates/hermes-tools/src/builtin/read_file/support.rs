//! Helpers for `read_file`: binary detection, similar-name suggestions and
//! notebook extraction.

use std::path::Path;

use serde_json::Value;

/// Extensions of files that are never text (images, media, archives, objects…).
const BINARY_EXTENSIONS: &[&str] = &[
    // images
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tiff", "tif", // video
    "mp4", "mov", "avi", "mkv", "webm", "wmv", "flv", "m4v", "mpeg", "mpg", // audio
    "mp3", "wav", "ogg", "flac", "aac", "m4a", "wma", "aiff", "opus", // archives
    "zip", "tar", "gz", "bz2", "7z", "rar", "xz", "z", "tgz", "iso",
    // executables and objects
    "exe", "dll", "so", "dylib", "bin", "o", "a", "obj", "lib", "app", "msi", "deb", "rpm",
    // office documents
    "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", // fonts
    "ttf", "otf", "woff", "woff2", "eot", // bytecode and VM artefacts
    "pyc", "pyo", "class", "jar", "war", "ear", "node", "wasm", "rlib", // databases
    "sqlite", "sqlite3", "db", "mdb", "idx", // design / 3D
    "psd", "ai", "eps", "sketch", "fig", "xd", "blend", "3ds", "max",
    // flash, lock and data blobs
    "swf", "fla", "lockb", "dat", "data",
];

/// The lower-cased extension of `path` when it names a known binary format.
pub(crate) fn binary_extension(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
    BINARY_EXTENSIONS.contains(&ext.as_str()).then_some(ext)
}

/// True when a leading sample of a file looks binary: a NUL byte, or more than
/// 30 % control characters other than tab / newline / carriage return.
pub(crate) fn looks_binary(sample: &[u8]) -> bool {
    if sample.contains(&0) {
        return true;
    }
    let text = String::from_utf8_lossy(sample);
    let mut total = 0usize;
    let mut control = 0usize;
    for c in text.chars().take(1000) {
        total += 1;
        if (c as u32) < 32 && !matches!(c, '\n' | '\r' | '\t') {
            control += 1;
        }
    }
    total > 0 && control * 10 > total * 3
}

/// Up to five entries of `dir` whose names resemble `name`, best first.
pub(crate) fn similar_files(dir: &Path, name: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let lower = name.to_lowercase();
    let (stem, ext) = split_ext(&lower);
    let mut scored: Vec<(u32, String)> = Vec::new();
    for entry in entries.flatten().take(2_000) {
        let candidate = entry.file_name().to_string_lossy().into_owned();
        let lc = candidate.to_lowercase();
        let (c_stem, c_ext) = split_ext(&lc);
        let score = if lc == lower {
            100
        } else if c_stem == stem {
            90
        } else if lc.starts_with(&lower) || lower.starts_with(&lc) {
            70
        } else if lc.contains(&lower) {
            60
        } else if lc.len() > 2 && lower.contains(&lc) {
            40
        } else {
            let sim = strsim::normalized_damerau_levenshtein(&lower, &lc);
            if sim >= 0.6 {
                (sim * 50.0) as u32
            } else if !ext.is_empty() && ext == c_ext && strsim::jaro_winkler(&lower, &lc) >= 0.8 {
                25
            } else {
                0
            }
        };
        if score > 0 {
            scored.push((score, dir.join(&candidate).display().to_string()));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(5).map(|(_, p)| p).collect()
}

fn split_ext(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(i) if i > 0 => (&name[..i], &name[i + 1..]),
        _ => (name, ""),
    }
}

fn source_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// A Jupyter notebook's cells as readable text, or `None` when it does not parse.
pub(crate) fn notebook_text(raw: &[u8]) -> Option<String> {
    let nb: Value = serde_json::from_slice(raw).ok()?;
    let cells: Vec<&Value> = match nb.get("cells").and_then(Value::as_array) {
        Some(cells) => cells.iter().collect(),
        None => nb
            .get("worksheets")?
            .as_array()?
            .iter()
            .filter_map(|ws| ws.get("cells").and_then(Value::as_array))
            .flatten()
            .collect(),
    };
    let mut counts = [0usize; 3];
    let mut out: Vec<String> = Vec::new();
    for cell in cells {
        let (idx, label) = match cell.get("cell_type").and_then(Value::as_str) {
            Some("markdown") => (0, "Markdown"),
            Some("code") => (1, "Code"),
            Some("raw") => (2, "Raw"),
            _ => continue,
        };
        counts[idx] += 1;
        let header = if idx == 2 {
            format!("# ── {label} cell ──")
        } else {
            format!("# ── {label} cell {} ──", counts[idx])
        };
        out.push(header);
        out.push(
            source_text(cell.get("source"))
                .trim_end_matches('\n')
                .to_owned(),
        );
        out.push(String::new());
    }
    if out.is_empty() {
        return None;
    }
    Some(format!("{}\n", out.join("\n").trim_end_matches('\n')))
}
