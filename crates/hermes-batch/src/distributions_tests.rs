use super::*;

/// Dice that return the given rolls, then 0.99 forever.
struct Fixed(Vec<f64>);

impl Dice for Fixed {
    fn roll(&mut self) -> f64 {
        if self.0.is_empty() {
            0.99
        } else {
            self.0.remove(0)
        }
    }
}

#[test]
fn all_seventeen_reference_distributions_are_there() {
    assert_eq!(DISTRIBUTIONS.len(), 17);
    assert_eq!(names()[0], "default");
    let science = get("science").unwrap();
    assert_eq!(
        science.toolsets,
        &[
            ("web", 94),
            ("terminal", 94),
            ("file", 94),
            ("vision", 65),
            ("browser", 50),
            ("image_gen", 15)
        ]
    );
    assert_eq!(get("terminal_tasks").unwrap().toolsets[2], ("web", 97));
    assert!(get("nope").is_none());
    let sorted: Vec<&str> = sorted().iter().map(|d| d.name).collect();
    assert_eq!(sorted.first(), Some(&"balanced"));
    assert_eq!(sorted.last(), Some(&"terminal_web"));
}

#[test]
fn every_toolset_named_is_one_of_ours() {
    for d in DISTRIBUTIONS {
        for (toolset, _) in d.toolsets {
            assert!(is_valid_toolset(toolset), "{} names {toolset}", d.name);
        }
    }
}

#[test]
fn each_toolset_is_an_independent_draw() {
    let research = get("research").unwrap();
    // web 90 (0.5 → in), browser 70 (0.71 → out), vision 50 (0.49 → in), terminal 10 (0.09 → in)
    let s = sample(research, &mut Fixed(vec![0.5, 0.71, 0.49, 0.09]), |_| true);
    assert_eq!(s.toolsets, ["web", "vision", "terminal"]);
    assert!(s.warnings.is_empty());
}

#[test]
fn nothing_drawn_falls_back_to_the_highest_chance_first_on_ties() {
    let d = get("mixed_tasks").unwrap();
    let s = sample(d, &mut Fixed(vec![]), |_| true);
    assert_eq!(s.toolsets, ["browser"]);
    let d = get("image_gen").unwrap();
    let s = sample(d, &mut Fixed(vec![]), |_| true);
    assert_eq!(s.toolsets, ["image_gen"]);
}

#[test]
fn invalid_toolsets_are_skipped_with_a_warning() {
    let d = get("terminal_only").unwrap();
    let s = sample(d, &mut Fixed(vec![0.0, 0.0]), |t| t != "terminal");
    assert_eq!(s.toolsets, ["file"]);
    assert_eq!(
        s.warnings,
        ["Toolset 'terminal' in distribution 'terminal_only' is not valid"]
    );
    // The fallback is not used when it is the invalid one.
    let s = sample(get("minimal").unwrap(), &mut Fixed(vec![]), |_| false);
    assert!(s.toolsets.is_empty());
}

#[test]
fn seeded_dice_are_reproducible_per_prompt_and_cover_the_range() {
    let a: Vec<f64> = (0..5)
        .map(|_| SeededDice::for_prompt(42, 7))
        .map(|mut d| d.roll())
        .collect();
    assert!(a.windows(2).all(|w| w[0] == w[1]));
    let mut other = SeededDice::for_prompt(42, 8);
    assert_ne!(other.roll(), a[0]);
    let mut dice = SeededDice::for_prompt(1, 0);
    let rolls: Vec<f64> = (0..2000).map(|_| dice.roll()).collect();
    assert!(rolls.iter().all(|r| (0.0..1.0).contains(r)));
    let mean = rolls.iter().sum::<f64>() / rolls.len() as f64;
    assert!((0.45..0.55).contains(&mean), "{mean}");
}

#[test]
fn a_fixed_seed_gives_a_fixed_balanced_sample() {
    let d = get("balanced").unwrap();
    let first: Vec<Vec<String>> = (0..20)
        .map(|i| sample(d, &mut SeededDice::for_prompt(99, i), |_| true).toolsets)
        .collect();
    let again: Vec<Vec<String>> = (0..20)
        .map(|i| sample(d, &mut SeededDice::for_prompt(99, i), |_| true).toolsets)
        .collect();
    assert_eq!(first, again);
    assert!(first.iter().all(|t| !t.is_empty()));
    // Roughly half of the draws include each toolset.
    let web = first
        .iter()
        .filter(|t| t.iter().any(|s| s == "web"))
        .count();
    assert!((3..=17).contains(&web), "{web}");
}
