//! Holographic reduced representations as the reference's holographic
//! store computes them: phase vectors in [0, 2π) whose atoms come from
//! SHA-256, so the same word gives the same vector here and there, and the
//! vectors it stores (`float64` bytes, little-endian) read back unchanged.

use std::f64::consts::TAU;

use sha2::{Digest, Sha256};

/// A phase vector.
pub type Phases = Vec<f64>;

/// The reserved atom a fact's content is bound to.
pub const ROLE_CONTENT: &str = "__hrr_role_content__";
/// The reserved atom a fact's entities are bound to.
pub const ROLE_ENTITY: &str = "__hrr_role_entity__";

/// Characters stripped from both ends of a token.
const TOKEN_PUNCTUATION: &[char] = &[
    '.', ',', '!', '?', ';', ':', '"', '\'', '(', ')', '[', ']', '{', '}',
];

/// The atom for `word`: SHA-256 of `word:i` read as little-endian u16s,
/// scaled to phases.
pub fn atom(word: &str, dim: usize) -> Phases {
    let mut phases = Vec::with_capacity(dim);
    let mut block = 0;
    while phases.len() < dim {
        let digest = Sha256::digest(format!("{word}:{block}").as_bytes());
        for pair in digest.chunks_exact(2) {
            if phases.len() == dim {
                break;
            }
            let value = u16::from_le_bytes([pair[0], pair[1]]);
            phases.push(f64::from(value) * (TAU / 65536.0));
        }
        block += 1;
    }
    phases
}

/// Associates two vectors (the result resembles neither).
pub fn bind(a: &[f64], b: &[f64]) -> Phases {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x + y).rem_euclid(TAU))
        .collect()
}

/// Takes `key` back out of `memory`: `unbind(bind(a, b), a) ≈ b`.
pub fn unbind(memory: &[f64], key: &[f64]) -> Phases {
    memory
        .iter()
        .zip(key)
        .map(|(m, k)| (m - k).rem_euclid(TAU))
        .collect()
}

/// Superposes vectors (the result resembles each): the angle of the sum of
/// their unit phasors.
pub fn bundle<'a>(vectors: impl IntoIterator<Item = &'a [f64]>) -> Phases {
    let mut sum: Vec<(f64, f64)> = Vec::new();
    for v in vectors {
        if sum.is_empty() {
            sum = vec![(0.0, 0.0); v.len()];
        }
        for (s, phase) in sum.iter_mut().zip(v) {
            s.0 += phase.cos();
            s.1 += phase.sin();
        }
    }
    sum.into_iter()
        .map(|(re, im)| im.atan2(re).rem_euclid(TAU))
        .collect()
}

/// Mean cosine of the phase differences: 1 identical, ~0 unrelated.
pub fn similarity(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| (x - y).cos()).sum::<f64>() / a.len() as f64
}

/// A text as the bundle of its lower-cased, punctuation-trimmed words.
pub fn text(text: &str, dim: usize) -> Phases {
    let atoms: Vec<Phases> = text
        .to_lowercase()
        .split_whitespace()
        .map(|t| t.trim_matches(TOKEN_PUNCTUATION))
        .filter(|t| !t.is_empty())
        .map(|t| atom(t, dim))
        .collect();
    if atoms.is_empty() {
        return atom("__hrr_empty__", dim);
    }
    bundle(atoms.iter().map(Vec::as_slice))
}

/// A fact: its content bound to the content role, bundled with each
/// entity (lower-cased) bound to the entity role.
pub fn fact(content: &str, entities: &[String], dim: usize) -> Phases {
    let role_entity = atom(ROLE_ENTITY, dim);
    let mut parts = vec![bind(&text(content, dim), &atom(ROLE_CONTENT, dim))];
    for entity in entities {
        parts.push(bind(&atom(&entity.to_lowercase(), dim), &role_entity));
    }
    bundle(parts.iter().map(Vec::as_slice))
}

/// The stored form: `float64` little-endian bytes.
pub fn to_bytes(phases: &[f64]) -> Vec<u8> {
    phases.iter().flat_map(|p| p.to_le_bytes()).collect()
}

/// A stored vector read back.
pub fn from_bytes(bytes: &[u8]) -> Phases {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoms_are_deterministic_and_unrelated_words_are_near_orthogonal() {
        let a = atom("helix", 1024);
        assert_eq!(a.len(), 1024);
        assert_eq!(a, atom("helix", 1024));
        assert!(a.iter().all(|p| (0.0..TAU).contains(p)));
        assert!(similarity(&a, &atom("vim", 1024)).abs() < 0.1);
        assert!((similarity(&a, &a) - 1.0).abs() < 1e-12);
        // The first phase is SHA-256("helix:0")'s first two bytes, little-endian.
        let digest = Sha256::digest(b"helix:0");
        let expected = f64::from(u16::from_le_bytes([digest[0], digest[1]])) * TAU / 65536.0;
        assert_eq!(a[0], expected);
    }

    #[test]
    fn binding_undoes_and_a_bundle_resembles_its_parts() {
        let dim = 1024;
        let (a, b) = (atom("peppi", dim), atom("backend", dim));
        let back = unbind(&bind(&a, &b), &a);
        assert!(
            back.iter()
                .zip(&b)
                .all(|(x, y)| (x - y).abs() < 1e-9 || (x - y).abs() > TAU - 1e-9)
        );
        let both = bundle([a.as_slice(), b.as_slice()]);
        assert!(similarity(&both, &a) > 0.5 && similarity(&both, &b) > 0.5);
        assert!(
            similarity(&bind(&a, &b), &a).abs() < 0.1,
            "a binding resembles neither part"
        );
        let fact = fact("Peppi maintains the backend", &["Peppi".to_owned()], dim);
        assert_eq!(from_bytes(&to_bytes(&fact)), fact);
        assert_eq!(text("", dim), atom("__hrr_empty__", dim));
        assert_eq!(text("Backend!", dim), text("backend", dim));
    }
}
