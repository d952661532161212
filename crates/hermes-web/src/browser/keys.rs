//! Key names as `browser_press` takes them (`Enter`, `Control+a`, `Tab` …),
//! turned into the key events Chromium's `Input.dispatchKeyEvent` wants.

use serde_json::{Value, json};

/// One key press: the `keyDown` and `keyUp` parameters.
pub fn events(spec: &str) -> (Value, Value) {
    let parts: Vec<&str> = if spec == "+" {
        vec!["+"]
    } else {
        spec.split('+').collect()
    };
    let (mods, key) = parts.split_at(parts.len().saturating_sub(1));
    let mut modifiers = 0;
    for m in mods {
        modifiers |= match m.to_ascii_lowercase().as_str() {
            "alt" => 1,
            "control" | "ctrl" => 2,
            "meta" | "cmd" | "command" => 4,
            "shift" => 8,
            _ => 0,
        };
    }
    let key = key.first().copied().unwrap_or("");
    let (name, code, vk, text): (String, String, i64, Option<String>) =
        match key.to_ascii_lowercase().as_str() {
            "enter" | "return" => ("Enter".into(), "Enter".into(), 13, Some("\r".into())),
            "tab" => ("Tab".into(), "Tab".into(), 9, Some("\t".into())),
            "escape" | "esc" => ("Escape".into(), "Escape".into(), 27, None),
            "backspace" => ("Backspace".into(), "Backspace".into(), 8, None),
            "delete" => ("Delete".into(), "Delete".into(), 46, None),
            "arrowup" | "up" => ("ArrowUp".into(), "ArrowUp".into(), 38, None),
            "arrowdown" | "down" => ("ArrowDown".into(), "ArrowDown".into(), 40, None),
            "arrowleft" | "left" => ("ArrowLeft".into(), "ArrowLeft".into(), 37, None),
            "arrowright" | "right" => ("ArrowRight".into(), "ArrowRight".into(), 39, None),
            "home" => ("Home".into(), "Home".into(), 36, None),
            "end" => ("End".into(), "End".into(), 35, None),
            "pageup" => ("PageUp".into(), "PageUp".into(), 33, None),
            "pagedown" => ("PageDown".into(), "PageDown".into(), 34, None),
            "space" | " " => (" ".into(), "Space".into(), 32, Some(" ".into())),
            _ => {
                let mut chars = key.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => {
                        let code = if c.is_ascii_alphabetic() {
                            format!("Key{}", c.to_ascii_uppercase())
                        } else if c.is_ascii_digit() {
                            format!("Digit{c}")
                        } else {
                            String::new()
                        };
                        let vk = if c.is_ascii_alphanumeric() {
                            i64::from(c.to_ascii_uppercase() as u8)
                        } else {
                            0
                        };
                        (c.to_string(), code, vk, Some(c.to_string()))
                    }
                    _ => (key.to_owned(), key.to_owned(), 0, None),
                }
            }
        };
    // With Control or Meta held, a key is a shortcut and types nothing.
    let text = text.filter(|_| modifiers & (2 | 4) == 0);
    let mut down = json!({"type": if text.is_some() { "keyDown" } else { "rawKeyDown" }, "key": name, "code": code,
                          "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk, "modifiers": modifiers});
    if let Some(text) = &text {
        down["text"] = json!(text);
        down["unmodifiedText"] = json!(text);
    }
    let up = json!({"type": "keyUp", "key": name, "code": code, "windowsVirtualKeyCode": vk,
                    "nativeVirtualKeyCode": vk, "modifiers": modifiers});
    (down, up)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn names_chords_and_characters() {
        let (down, up) = events("Enter");
        assert_eq!(
            (
                down["key"].as_str(),
                down["text"].as_str(),
                down["windowsVirtualKeyCode"].as_i64()
            ),
            (Some("Enter"), Some("\r"), Some(13))
        );
        assert_eq!(up["type"], "keyUp");
        let (down, _) = events("Control+a");
        assert_eq!(
            (down["modifiers"].as_i64(), down["code"].as_str()),
            (Some(2), Some("KeyA"))
        );
        assert!(down.get("text").is_none(), "a shortcut types nothing");
        assert_eq!(events("esc").0["key"], "Escape");
        assert_eq!(events("7").0["code"], "Digit7");
    }
}
