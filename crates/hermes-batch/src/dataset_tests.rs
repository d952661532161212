use super::*;

#[test]
fn indices_count_valid_entries_only() {
    let text = "{\"prompt\": \"a\"}\n\n  not json\n{\"other\": 1}\n{\"prompt\": 5}\n[1]\n{\"prompt\": \"b\", \"extra\": true}\r\n";
    let data = parse(text, None);
    assert_eq!(
        data.entries,
        [
            Entry {
                index: 0,
                prompt: "a".into()
            },
            Entry {
                index: 1,
                prompt: "b".into()
            },
        ]
    );
    assert_eq!(data.warnings.len(), 4, "{:?}", data.warnings);
    assert!(data.warnings[0].starts_with("Invalid JSON on line 3"));
    assert_eq!(data.warnings[1], "Line 4 missing 'prompt' field, skipping");
}

#[test]
fn max_samples_keeps_the_first_valid_entries() {
    let text = "{\"prompt\": \"a\"}\nbad\n{\"prompt\": \"b\"}\n{\"prompt\": \"c\"}\n";
    let data = parse(text, Some(2));
    let prompts: Vec<&str> = data.entries.iter().map(|e| e.prompt.as_str()).collect();
    assert_eq!(prompts, ["a", "b"]);
}

#[test]
fn container_images_are_noted() {
    let data = parse("{\"prompt\": \"a\", \"image\": \"python:3.11\"}\n", None);
    assert_eq!(data.entries.len(), 1);
    assert!(
        data.warnings[0].contains("not supported"),
        "{:?}",
        data.warnings
    );
}

#[test]
fn missing_or_empty_files_are_errors_that_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let err = load(&dir.path().join("nope.jsonl"), None).unwrap_err();
    assert!(err.to_string().contains("Dataset file not found"), "{err}");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "\n{\"x\": 1}\n").unwrap();
    let err = load(&empty, None).unwrap_err();
    assert!(err.to_string().contains("No valid entries"), "{err}");
}
