//! Rendering scripted replies as OpenAI Responses API answers (`POST …/responses`).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::reply::{Answer, Kind, Rendered, Reply, RequestInfo, pieces};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id(prefix: &str) -> String {
    format!("{prefix}_mock_{}", NEXT_ID.fetch_add(1, Ordering::Relaxed))
}

/// The fake `encrypted_content` the mock puts on a reasoning item with this summary.
pub(crate) fn mock_encrypted(summary: &str) -> String {
    // FNV-1a: stable across runs, different for different texts.
    let hash = summary.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("gAAAA-mock-enc-{hash:016x}")
}

/// The OpenAI error `(type, code)` for an HTTP status.
fn error_kind(status: u16) -> (&'static str, &'static str) {
    match status {
        400 => ("invalid_request_error", "invalid_request"),
        401 => ("invalid_request_error", "invalid_api_key"),
        403 => ("permission_error", "permission_denied"),
        404 => ("invalid_request_error", "model_not_found"),
        429 => ("rate_limit_error", "rate_limit_exceeded"),
        _ => ("server_error", "server_error"),
    }
}

/// An OpenAI error body: `{"error":{"message":…,"type":…,"param":null,"code":…}}`.
pub(crate) fn error_body(status: u16, message: &str) -> String {
    let (kind, code) = error_kind(status);
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}}).to_string()
}

pub(crate) fn render(reply: &Reply, info: &RequestInfo) -> Rendered {
    match &reply.kind {
        Kind::Error { status, body } => {
            // Bodies that are not JSON are wrapped in OpenAI's error shape.
            let body = if serde_json::from_str::<Value>(body).is_ok() {
                body.clone()
            } else {
                error_body(*status, body)
            };
            Rendered::Full {
                status: *status,
                content_type: "application/json",
                body,
            }
        }
        Kind::RawSse(events) => Rendered::Sse {
            payloads: events.clone(),
        },
        Kind::Completion(answer) if info.stream && !reply.force_json => Rendered::NamedSse {
            events: Stream::new(answer, info).events(),
        },
        Kind::Completion(answer) => Rendered::Full {
            status: 200,
            content_type: "application/json",
            body: Items::new(answer).response(answer, info, "").to_string(),
        },
    }
}

/// The output items of one answer, with their ids fixed up front so the
/// streamed events and the final response agree.
struct Items {
    reasoning: Option<(String, String)>,
    message: Option<(String, String)>,
    calls: Vec<(String, String, String, String)>,
}

impl Items {
    fn new(answer: &Answer) -> Self {
        Self {
            reasoning: answer.reasoning.clone().map(|r| (next_id("rs"), r)),
            message: answer.text.clone().map(|t| (next_id("msg"), t)),
            calls: answer
                .calls
                .iter()
                .map(|(call_id, name, args)| {
                    (next_id("fc"), call_id.clone(), name.clone(), args.clone())
                })
                .collect(),
        }
    }

    fn reasoning_item((id, summary): &(String, String)) -> Value {
        json!({"id": id, "type": "reasoning",
               "summary": [{"type": "summary_text", "text": summary}],
               "encrypted_content": mock_encrypted(summary)})
    }

    fn message_item((id, text): &(String, String), status: &str) -> Value {
        json!({"id": id, "type": "message", "status": status, "role": "assistant",
               "content": [{"type": "output_text", "text": text, "annotations": []}]})
    }

    fn call_item((id, call_id, name, args): &(String, String, String, String)) -> Value {
        json!({"id": id, "type": "function_call", "status": "completed",
               "call_id": call_id, "name": name, "arguments": args})
    }

    fn all(&self, status: &str) -> Vec<Value> {
        let mut out: Vec<Value> = self.reasoning.iter().map(Self::reasoning_item).collect();
        out.extend(self.message.iter().map(|m| Self::message_item(m, status)));
        out.extend(self.calls.iter().map(Self::call_item));
        out
    }

    /// The whole `response` object, as the final event or a plain JSON reply.
    fn response(&self, answer: &Answer, info: &RequestInfo, id: &str) -> Value {
        let (prompt, completion) = answer.token_counts(info);
        let (cached, reasoning) = answer.usage_details.unwrap_or((0, 0));
        let incomplete = answer.finish_reason() == "length";
        let status = if incomplete {
            "incomplete"
        } else {
            "completed"
        };
        let id = if id.is_empty() {
            next_id("resp")
        } else {
            id.to_owned()
        };
        json!({
            "id": id,
            "object": "response",
            "created_at": 1_700_000_000,
            "status": status,
            "model": Answer::model(info),
            "output": self.all(status),
            "incomplete_details": if incomplete {
                json!({"reason": "max_output_tokens"})
            } else {
                Value::Null
            },
            "error": null,
            "usage": {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": cached},
                "output_tokens": completion,
                "output_tokens_details": {"reasoning_tokens": reasoning},
                "total_tokens": prompt + completion,
            },
        })
    }
}

/// Builds the named-event sequence of one streamed response.
struct Stream<'a> {
    answer: &'a Answer,
    info: &'a RequestInfo,
    items: Items,
    out: Vec<(String, String)>,
    seq: u64,
}

impl<'a> Stream<'a> {
    fn new(answer: &'a Answer, info: &'a RequestInfo) -> Self {
        Self {
            answer,
            info,
            items: Items::new(answer),
            out: Vec::new(),
            seq: 0,
        }
    }

    /// Adds an event whose JSON carries `type` and `sequence_number`.
    fn push(&mut self, kind: &str, mut data: Value) {
        if let Some(obj) = data.as_object_mut() {
            obj.insert("type".into(), json!(kind));
            obj.insert("sequence_number".into(), json!(self.seq));
        }
        self.seq += 1;
        self.out.push((kind.to_owned(), data.to_string()));
    }

    fn events(mut self) -> Vec<(String, String)> {
        let id = next_id("resp");
        let model = Answer::model(self.info);
        let pending = json!({"id": id, "object": "response", "status": "in_progress",
                             "model": model, "output": [], "usage": null});
        self.push("response.created", json!({"response": pending}));
        self.push("response.in_progress", json!({"response": pending}));
        let mut index = 0;
        if let Some(reasoning) = self.items.reasoning.clone() {
            self.reasoning(index, &reasoning);
            index += 1;
        }
        if let Some(message) = self.items.message.clone() {
            self.message(index, &message);
            index += 1;
        }
        for call in self.items.calls.clone() {
            self.call(index, &call);
            index += 1;
        }
        let response = self.items.response(self.answer, self.info, &id);
        let terminal = if response["status"] == "incomplete" {
            "response.incomplete"
        } else {
            "response.completed"
        };
        self.push(terminal, json!({"response": response}));
        self.out
    }

    fn reasoning(&mut self, index: usize, item: &(String, String)) {
        let (id, summary) = item;
        self.push(
            "response.output_item.added",
            json!({"output_index": index,
                   "item": {"id": id, "type": "reasoning", "summary": []}}),
        );
        let part = json!({"item_id": id, "output_index": index, "summary_index": 0});
        let with = |extra: Value| {
            let mut v = part.clone();
            if let (Some(obj), Some(more)) = (v.as_object_mut(), extra.as_object()) {
                obj.extend(more.clone());
            }
            v
        };
        self.push(
            "response.reasoning_summary_part.added",
            with(json!({"part": {"type": "summary_text", "text": ""}})),
        );
        for piece in pieces(summary, 8) {
            self.push(
                "response.reasoning_summary_text.delta",
                with(json!({"delta": piece})),
            );
        }
        self.push(
            "response.reasoning_summary_text.done",
            with(json!({"text": summary})),
        );
        self.push(
            "response.reasoning_summary_part.done",
            with(json!({"part": {"type": "summary_text", "text": summary}})),
        );
        self.push(
            "response.output_item.done",
            json!({"output_index": index, "item": Items::reasoning_item(item)}),
        );
    }

    fn message(&mut self, index: usize, item: &(String, String)) {
        let (id, text) = item;
        self.push(
            "response.output_item.added",
            json!({"output_index": index, "item": {"id": id, "type": "message",
                   "status": "in_progress", "role": "assistant", "content": []}}),
        );
        let at = json!({"item_id": id, "output_index": index, "content_index": 0});
        let with = |key: &str, value: Value| {
            let mut v = at.clone();
            v[key] = value;
            v
        };
        self.push(
            "response.content_part.added",
            with(
                "part",
                json!({"type": "output_text", "text": "", "annotations": []}),
            ),
        );
        for piece in pieces(text, 8) {
            self.push("response.output_text.delta", with("delta", json!(piece)));
        }
        self.push("response.output_text.done", with("text", json!(text)));
        self.push(
            "response.content_part.done",
            with(
                "part",
                json!({"type": "output_text", "text": text, "annotations": []}),
            ),
        );
        self.push(
            "response.output_item.done",
            json!({"output_index": index,
                   "item": Items::message_item(item, "completed")}),
        );
    }

    fn call(&mut self, index: usize, item: &(String, String, String, String)) {
        let (id, call_id, name, args) = item;
        self.push(
            "response.output_item.added",
            json!({"output_index": index, "item": {"id": id, "type": "function_call",
                   "status": "in_progress", "call_id": call_id, "name": name,
                   "arguments": ""}}),
        );
        for piece in pieces(args, 5) {
            self.push(
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": index, "delta": piece}),
            );
        }
        self.push(
            "response.function_call_arguments.done",
            json!({"item_id": id, "output_index": index, "arguments": args}),
        );
        self.push(
            "response.output_item.done",
            json!({"output_index": index, "item": Items::call_item(item)}),
        );
    }
}

#[cfg(test)]
#[path = "responses_tests.rs"]
mod tests;
