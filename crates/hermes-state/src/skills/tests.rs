use super::*;

const GOOD: &str = "---\nname: deploy\ndescription: Ship the app\nversion: 1.0.0\nplatforms: [linux, macos, windows]\nmetadata:\n  hermes:\n    tags: [ops, ci]\n    related_skills: [rollback]\n---\n# Deploy\n\n1. Run make deploy\n";

fn store() -> (tempfile::TempDir, SkillStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SkillStore::new(dir.path().join("skills"));
    (dir, store)
}

#[test]
fn parses_frontmatter_fields() {
    let (fm, body) = parse_frontmatter(GOOD);
    assert_eq!(fm.name.as_deref(), Some("deploy"));
    assert_eq!(fm.description.as_deref(), Some("Ship the app"));
    assert_eq!(fm.tags(), vec!["ops", "ci"]);
    assert_eq!(fm.related_skills(), vec!["rollback"]);
    assert!(body.starts_with("# Deploy"));
    assert!(fm.matches_platform("linux"));
    let (fm, body) = parse_frontmatter("no frontmatter");
    assert_eq!(fm, Frontmatter::default());
    assert_eq!(body, "no frontmatter");
}

#[test]
fn platform_gating() {
    let (fm, _) = parse_frontmatter("---\nname: a\nplatforms: [darwin]\n---\nx\n");
    assert!(fm.matches_platform("macos"));
    assert!(!fm.matches_platform("linux"));
}

#[test]
fn validation_says_what_to_fix() {
    assert!(validate_skill_md(GOOD).is_ok());
    let cases = [
        ("", "empty"),
        ("# no fm", "must start"),
        ("---\nname: a\ndescription: b\n", "not closed"),
        ("---\ndescription: b\n---\nbody\n", "'name'"),
        ("---\nname: a\n---\nbody\n", "'description'"),
        ("---\nname: a\ndescription: b\n---\n\n", "instructions"),
        ("---\n- a\n---\nbody\n", "mapping"),
    ];
    for (text, want) in cases {
        let err = validate_skill_md(text).unwrap_err();
        assert!(err.contains(want), "{text:?}: {err}");
    }
    let long = format!(
        "---\nname: a\ndescription: {}\n---\nbody\n",
        "x".repeat(1025)
    );
    assert!(validate_skill_md(&long).unwrap_err().contains("1024"));
    assert!(validate_name("good-name_1.x", "Skill").is_ok());
    assert!(validate_name("Bad", "Skill").is_err());
    assert!(validate_name("-bad", "Skill").is_err());
    assert!(
        validate_name(&"a".repeat(65), "Skill")
            .unwrap_err()
            .contains("64")
    );
}

#[test]
fn discovery_walks_categories_and_skips_support_dirs() {
    let (_d, store) = store();
    store.create("deploy", GOOD, Some("devops")).unwrap();
    store
        .create(
            "plain",
            "---\nname: plain\ndescription: ''\n---\n# T\nFirst line.\n",
            None,
        )
        .unwrap();
    // A SKILL.md inside a support dir or .git is not a skill.
    let nested = store.root().join("plain/references/old");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("SKILL.md"), GOOD.replace("deploy", "ghost")).unwrap();
    let git = store.root().join(".git/x");
    std::fs::create_dir_all(&git).unwrap();
    std::fs::write(git.join("SKILL.md"), GOOD.replace("deploy", "ghost2")).unwrap();
    let all = store.discover();
    let names: Vec<_> = all.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["deploy", "plain"]);
    assert_eq!(all[0].category.as_deref(), Some("devops"));
    assert_eq!(all[1].category, None);
    assert_eq!(all[1].description, "First line.");
}

#[test]
fn manage_roundtrip_and_traversal() {
    let (_d, store) = store();
    store.create("deploy", GOOD, None).unwrap();
    assert!(
        store
            .create("deploy", GOOD, None)
            .unwrap_err()
            .to_string()
            .contains("already exists")
    );
    assert_eq!(
        store
            .patch("deploy", None, "make deploy", "just ship", false)
            .unwrap(),
        1
    );
    assert!(store.read("deploy", None).unwrap().contains("just ship"));
    assert!(store.patch("deploy", None, "absent", "x", false).is_err());
    store
        .write_file("deploy", "references/api.md", "API")
        .unwrap();
    assert_eq!(
        store.read("deploy", Some("references/api.md")).unwrap(),
        "API"
    );
    let skill = store.find("deploy").unwrap();
    assert_eq!(
        store.linked_files(&skill),
        vec![(
            "references".to_owned(),
            vec!["references/api.md".to_owned()]
        )]
    );
    for bad in ["../x.md", "/etc/passwd", "references/../../x"] {
        assert!(store.read("deploy", Some(bad)).is_err(), "{bad}");
        assert!(store.write_file("deploy", bad, "x").is_err(), "{bad}");
    }
    assert!(store.write_file("deploy", "notes.md", "x").is_err());
    assert!(store.write_file("deploy", "references", "x").is_err());
    store.remove_file("deploy", "references/api.md").unwrap();
    assert!(store.edit("deploy", "broken").is_err());
    store
        .edit("deploy", &GOOD.replace("Ship", "Release"))
        .unwrap();
    assert_eq!(store.find("deploy").unwrap().description, "Release the app");
    store.delete("deploy").unwrap();
    assert!(store.find("deploy").is_none());
}

#[test]
fn config_disables_skills() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        "model:\n  default: x\nskills:\n  disabled: [deploy]\n",
    )
    .unwrap();
    let store = SkillStore::for_home(home.path());
    store.create("deploy", GOOD, None).unwrap();
    assert!(store.is_disabled("deploy"));
    assert!(store.discover().is_empty());
    assert!(store.find("deploy").is_none());
    assert_eq!(store.discover_all().len(), 1);
    // Still taken: a disabled skill's name cannot be reused.
    assert!(store.create("deploy", GOOD, None).is_err());
}
