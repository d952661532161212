use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::*;
use crate::Clarifier;

/// The schema exactly as the reference (`tools/clarify_tool.py`) declares it.
/// The reference's parameters with their descriptions left out (the
/// descriptions are ours): names, types, limits and the required list.
const REFERENCE_PARAMETERS: &str = r#"{
  "type": "object",
  "properties": {
    "question": {"type": "string"},
    "choices": {"type": "array", "items": {"type": "string"}, "maxItems": 4}
  },
  "required": ["question"]
}"#;

/// A schema with every `description` removed.
fn without_descriptions(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "description")
                .map(|(k, v)| (k.clone(), without_descriptions(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_descriptions).collect()),
        other => other.clone(),
    }
}

/// Answers with a fixed result and records what it was asked.
#[derive(Debug, Default)]
struct Fake {
    answer: Option<Result<String, String>>,
    asked: Mutex<Vec<(String, Vec<String>)>>,
}

impl Clarifier for Fake {
    fn ask<'a>(
        &'a self,
        question: &'a str,
        choices: &'a [String],
    ) -> BoxFuture<'a, Result<String, String>> {
        self.asked
            .lock()
            .unwrap()
            .push((question.to_owned(), choices.to_vec()));
        let answer = self.answer.clone().unwrap_or(Ok(String::new()));
        Box::pin(async move { answer })
    }
}

fn ctx_with(fake: &Arc<Fake>) -> ToolContext {
    let mut ctx = ToolContext::new("/", "t");
    let clarifier: Arc<dyn Clarifier> = fake.clone();
    ctx.clarifier = Some(clarifier);
    ctx
}

#[test]
fn clarify_schema_has_the_reference_parameters() {
    let schema = ClarifyTool.schema();
    let reference: Value = serde_json::from_str(REFERENCE_PARAMETERS).unwrap();
    assert_eq!(schema.name, "clarify");
    assert_eq!(without_descriptions(&schema.parameters), reference);
    for key in ["question", "choices"] {
        assert!(
            schema.parameters["properties"][key]["description"].is_string(),
            "{key} is described"
        );
    }
    assert!(schema.description.contains("up to 4"));
    assert_eq!(ClarifyTool.toolset(), "clarify");
    assert_eq!(ClarifyTool.emoji(), "❓");
    assert_eq!(ClarifyTool.parallel_class(), ParallelClass::Exclusive);
}

#[test]
fn clarify_choices_are_flattened_like_the_reference() {
    assert_eq!(flatten_choice(&json!("  staging ")), "staging");
    assert_eq!(flatten_choice(&json!(null)), "");
    assert_eq!(
        flatten_choice(&json!({"description": "d", "title": "t"})),
        "d"
    );
    assert_eq!(
        flatten_choice(&json!({"label": " ", "text": "txt", "title": "t"})),
        "txt"
    );
    assert_eq!(flatten_choice(&json!({"title": "T"})), "T");
    assert_eq!(flatten_choice(&json!({"name": "n", "value": "v"})), "");
    assert_eq!(
        flatten_choice(&json!(["a", {"label": "b"}, " c "])),
        "a b c"
    );
    assert_eq!(flatten_choice(&json!(3)), "3");
    assert_eq!(flatten_choice(&json!(true)), "True");
}

#[test]
fn clarify_choices_are_trimmed_to_four_and_empty_means_open() {
    let many = json!(["a", "", {"name": "x"}, "b", "c", "d", "e"]);
    assert_eq!(
        normalize_choices(Some(&many)).unwrap(),
        Some(vec!["a".into(), "b".into(), "c".into(), "d".into()])
    );
    assert_eq!(normalize_choices(Some(&json!([]))).unwrap(), None);
    assert_eq!(normalize_choices(Some(&json!(["  ", null]))).unwrap(), None);
    assert_eq!(normalize_choices(None).unwrap(), None);
    assert_eq!(normalize_choices(Some(&Value::Null)).unwrap(), None);
    let err = normalize_choices(Some(&json!("a"))).unwrap_err();
    assert_eq!(err.to_string(), "choices must be a list of strings.");
}

#[tokio::test]
async fn clarify_without_a_clarifier_reports_the_reference_error() {
    let ctx = ToolContext::new("/", "t");
    let err = ClarifyTool
        .call(json!({"question": "Which?", "choices": ["a"]}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(
        crate::error_json(&err.to_string()),
        json!({"error": "Clarify tool is not available in this execution context."}).to_string()
    );
}

#[tokio::test]
async fn clarify_asks_the_clarifier_and_returns_its_answer() {
    let fake = Arc::new(Fake {
        answer: Some(Ok("  prod \n".into())),
        ..Fake::default()
    });
    let ctx = ctx_with(&fake);
    let args = json!({"question": "  Which target? ", "choices": ["staging", {"label": "prod"}, "", "a", "b", "c"]});
    let out = ClarifyTool.call(args, &ctx).await.unwrap();
    assert_eq!(
        out,
        r#"{"question":"Which target?","choices_offered":["staging","prod","a","b"],"user_response":"prod"}"#
    );
    let asked = fake.asked.lock().unwrap().clone();
    assert_eq!(
        asked,
        vec![(
            "Which target?".to_owned(),
            vec!["staging".into(), "prod".into(), "a".into(), "b".into()]
        )]
    );
}

#[tokio::test]
async fn clarify_open_questions_offer_no_choices() {
    let fake = Arc::new(Fake {
        answer: Some(Ok("blue".into())),
        ..Fake::default()
    });
    let ctx = ctx_with(&fake);
    let out = ClarifyTool
        .call(json!({"question": "Colour?", "choices": []}), &ctx)
        .await
        .unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        json!({"question": "Colour?", "choices_offered": null, "user_response": "blue"})
    );
    assert_eq!(fake.asked.lock().unwrap()[0].1, Vec::<String>::new());
}

#[tokio::test]
async fn clarify_failures_and_missing_question_are_model_errors() {
    let fake = Arc::new(Fake {
        answer: Some(Err("cancelled".into())),
        ..Fake::default()
    });
    let ctx = ctx_with(&fake);
    let err = ClarifyTool
        .call(json!({"question": "Which?"}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Failed to get user input: cancelled");
    let err = ClarifyTool
        .call(json!({"question": "  "}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Question text is required.");
    assert!(fake.asked.lock().unwrap().len() == 1);
}
