use super::*;

fn name(p: &Parsed) -> Option<&'static str> {
    match p {
        Parsed::Known(def, _) => Some(def.name),
        Parsed::Unknown { .. } => None,
    }
}

#[test]
fn names_and_aliases_resolve_with_their_arguments() {
    assert_eq!(name(&parse("/new")), Some("new"));
    assert_eq!(name(&parse("/reset")), Some("new"));
    assert_eq!(name(&parse("/EXIT")), Some("quit"));
    let model = COMMANDS.iter().find(|d| d.name == "model").unwrap();
    assert_eq!(
        parse("/model  openrouter:some/model "),
        Parsed::Known(model, "openrouter:some/model".into())
    );
    let steer = COMMANDS.iter().find(|d| d.name == "steer").unwrap();
    assert_eq!(
        parse("/steer use the other file"),
        Parsed::Known(steer, "use the other file".into())
    );
    assert_eq!(name(&parse("/queue next")), Some("queue"));
}

#[test]
fn typos_get_a_suggestion() {
    let Parsed::Unknown { suggestion, typed } = parse("/modle x") else {
        panic!("not unknown");
    };
    assert_eq!((typed.as_str(), suggestion), ("modle", Some("model")));
    let Parsed::Unknown { suggestion, .. } = parse("/comp") else {
        panic!("not unknown");
    };
    assert_eq!(suggestion, Some("compress"));
    let Parsed::Unknown { suggestion, .. } = parse("/zzzzzzzz") else {
        panic!("not unknown");
    };
    assert_eq!(suggestion, None);
}

#[test]
fn completion_lists_matching_commands() {
    assert_eq!(
        complete("/re"),
        vec!["/reset", "/retry", "/reload-mcp", "/reload_mcp", "/resume"]
    );
    assert!(complete("/").len() >= COMMANDS.len());
}

#[test]
fn help_lists_every_command() {
    let text = help();
    for def in COMMANDS {
        assert!(text.contains(&format!("/{}", def.name)), "{}", def.name);
    }
}
