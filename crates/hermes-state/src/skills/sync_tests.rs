use super::md5::Md5;
use super::sync::*;

const V1: BundledSkill = BundledSkill {
    path: "notes/take-notes",
    files: &[
        (
            "SKILL.md",
            "---\nname: take-notes\ndescription: d\n---\nv1\n",
        ),
        ("references/a.md", "A"),
    ],
};
const V2: BundledSkill = BundledSkill {
    path: "notes/take-notes",
    files: &[
        (
            "SKILL.md",
            "---\nname: take-notes\ndescription: d\n---\nv2\n",
        ),
        ("references/a.md", "A"),
    ],
};

fn md5(s: &str) -> String {
    let mut h = Md5::default();
    h.update(s.as_bytes());
    h.hex()
}

#[test]
fn md5_known_vectors() {
    assert_eq!(md5(""), "d41d8cd98f00b204e9800998ecf8427e");
    assert_eq!(md5("abc"), "900150983cd24fb0d6963f7d28e17f72");
    assert_eq!(md5(&"a".repeat(1000)), "cabe45dcc9ae5b66ba86600cca6b8ba8");
}

#[test]
fn copies_updates_and_respects_user_changes() {
    let home = tempfile::tempdir().unwrap();
    let skills = home.path().join("skills");
    let r = sync_bundled(&skills, &[V1]).unwrap();
    assert_eq!(r.copied, vec!["take-notes"]);
    let md = skills.join("notes/take-notes/SKILL.md");
    assert!(std::fs::read_to_string(&md).unwrap().contains("v1"));
    let manifest = std::fs::read_to_string(skills.join(MANIFEST_FILE)).unwrap();
    assert_eq!(
        manifest,
        format!(
            "take-notes:{}\n",
            dir_hash(&skills.join("notes/take-notes"))
        )
    );
    // Unmodified copy follows a newer bundled version.
    let r = sync_bundled(&skills, &[V2]).unwrap();
    assert_eq!(r.updated, vec!["take-notes"]);
    assert!(std::fs::read_to_string(&md).unwrap().contains("v2"));
    // A user edit is never overwritten.
    std::fs::write(&md, "mine").unwrap();
    let r = sync_bundled(&skills, &[V1]).unwrap();
    assert_eq!(r.kept_modified, vec!["take-notes"]);
    assert_eq!(std::fs::read_to_string(&md).unwrap(), "mine");
    // A deleted skill stays deleted.
    std::fs::remove_dir_all(skills.join("notes/take-notes")).unwrap();
    let r = sync_bundled(&skills, &[V2]).unwrap();
    assert_eq!(r, SyncReport::default());
    assert!(!md.exists());
}

#[test]
fn opt_out_marker_disables_sync() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(NO_BUNDLED_MARKER), "").unwrap();
    let skills = home.path().join("skills");
    assert_eq!(sync_bundled(&skills, &[V1]).unwrap(), SyncReport::default());
    assert!(!skills.exists());
}
