use serde_json::json;

use super::*;

const KEY: &str = "sk-proj-abcdefghijklmnopqrstuvwxyz012345";

#[test]
fn a_json_result_is_masked_value_by_value_and_neighbours_survive() {
    let content = json!({
        "content": format!("1|# settings\n2|OPENAI_API_KEY={KEY}\n3|PORT=8080\n4|DEBUG=true"),
        "path": "/app/.env",
        "total_lines": 4,
    })
    .to_string();
    let out = tool_result("read_file", &json!({"path": "/app/.env"}), &content);
    assert!(!out.contains(KEY), "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["content"],
        "1|# settings\n2|OPENAI_API_KEY=«redacted:sk-…»\n3|PORT=8080\n4|DEBUG=true"
    );
}

#[test]
fn dotenv_passwords_are_masked_but_code_constants_are_not() {
    let env = json!({"content": "DB_PASSWORD=hunter2hunter2\nDB_HOST=x"}).to_string();
    let out = tool_result("read_file", &json!({"path": "deploy/prod.env"}), &env);
    assert!(!out.contains("hunter2"), "{out}");
    assert!(out.contains("DB_HOST=x"), "{out}");
    let code = json!({"content": "MAX_TOKENS=100\nPASSWORD_MIN_LEN=8"}).to_string();
    let out = tool_result("read_file", &json!({"path": "src/config.py"}), &code);
    assert_eq!(out, code, "constants in code stay");
}

#[test]
fn search_hits_in_a_dotenv_file_are_masked_as_that_file() {
    let content = json!({
        "matches": [
            {"path": "app/.env", "line": 3, "content": "SMTP_PASSWORD=correcthorsebattery"},
            {"path": "app/main.py", "line": 9, "content": "SMTP_PASSWORD=os.getenv('X')"},
        ],
        "total_count": 2,
    })
    .to_string();
    let out = tool_result("search_files", &json!({"pattern": "PASSWORD"}), &content);
    assert!(!out.contains("correcthorsebattery"), "{out}");
    assert!(out.contains("os.getenv('X')"), "{out}");
}

#[test]
fn terminal_env_dumps_and_cat_of_a_dotenv_file_are_masked() {
    let dump = json!({"output": format!("HOME=/root\nSERVICE_TOKEN=abcdefghijklmnopqrstuvwxyz\nTERM=dumb"), "exit_code": 0}).to_string();
    let out = tool_result("terminal", &json!({"command": "env | sort"}), &dump);
    assert!(!out.contains("abcdefghijklmnopqrstuvwxyz"), "{out}");
    assert!(
        out.contains("HOME=/root") && out.contains("TERM=dumb"),
        "{out}"
    );
    let cat =
        json!({"output": "API_SECRET=plaintextsecretvalue\nNAME=app", "exit_code": 0}).to_string();
    let out = tool_result("terminal", &json!({"command": "cat .env"}), &cat);
    assert!(!out.contains("plaintextsecretvalue"), "{out}");
    assert!(out.contains("NAME=app"), "{out}");
}

#[test]
fn any_tool_masks_key_shapes_and_plain_text_results_too() {
    let out = tool_result("web_extract", &json!({}), &format!("the key is {KEY}."));
    assert_eq!(out, "the key is «redacted:sk-…».");
    let clean = json!({"status": "ok", "n": 3}).to_string();
    assert_eq!(tool_result("todo", &json!({}), &clean), clean);
}

#[test]
fn assistant_text_masks_keys_but_keeps_code() {
    let text = format!("Your key is {KEY}.\n```\nMAX_RETRIES=3\n```");
    let out = assistant_text(&text);
    assert!(!out.contains(KEY));
    assert!(out.contains("MAX_RETRIES=3"));
}
