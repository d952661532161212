use super::*;

#[test]
fn shards_parse_and_partition_indices() {
    let s: Shard = "1/4".parse().unwrap();
    assert_eq!(s, Shard { index: 1, count: 4 });
    assert_eq!(s.to_string(), "1/4");
    assert_eq!(s.dir_name(), "1-of-4");
    let mine: Vec<usize> = (0..10).filter(|i| s.contains(*i)).collect();
    assert_eq!(mine, [1, 5, 9]);
    for bad in ["4/4", "1", "a/4", "1/0", "-1/4", "1/4/5", ""] {
        let err = bad.parse::<Shard>().unwrap_err();
        assert!(err.to_string().contains("expected I/N"), "{bad}: {err}");
    }
}

#[test]
fn run_dirs_and_names() {
    let base = Path::new("data");
    assert_eq!(run_dir(base, "r", None), Path::new("data/r"));
    assert_eq!(
        run_dir(base, "r", Some(Shard { index: 0, count: 2 })),
        Path::new("data/r/shards/0-of-2")
    );
    assert!(check_run_name("my_run-1").is_ok());
    for bad in ["", "a/b", "..", " x"] {
        assert!(check_run_name(bad).is_err(), "{bad}");
    }
}
