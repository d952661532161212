use super::*;

#[test]
fn limits_from_provider_wording() {
    let cases: &[(&str, Option<u64>)] = &[
        (
            "This model's maximum context length is 32768 tokens. However, your messages resulted in 40000 tokens.",
            Some(32768),
        ),
        (
            "context_length_exceeded: max context length 131072",
            Some(131072),
        ),
        ("Maximum context size 8192 exceeded", Some(8192)),
        (
            "The input (9000 tokens) is longer than the model's context length (8192 tokens). max_model_len=8192",
            Some(8192),
        ),
        (
            "prompt is too long: 250000 tokens > 200000 maximum",
            Some(200000),
        ),
        ("Input exceeds the context window", None),
        ("maximum context length is 512 tokens", None),
    ];
    for (msg, want) in cases {
        assert_eq!(parse_context_limit(msg), *want, "{msg}");
    }
    assert_eq!(
        lower_limit_from_error("maximum context length is 32768 tokens", 128_000),
        Some(32768)
    );
    assert_eq!(
        lower_limit_from_error("maximum context length is 32768 tokens", 32768),
        None
    );
}

#[test]
fn available_output_tokens() {
    let cases: &[(&str, Option<u64>)] = &[
        (
            "max_tokens: 32768 > context_window: 200000 - input_tokens: 190000 = available_tokens: 10000",
            Some(10000),
        ),
        ("Range of max_tokens should be [1, 65536]", Some(65536)),
        (
            "This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens (100000 of text input, 10000 of tool input, 30000 in the output).",
            Some(21072),
        ),
        (
            "This model's maximum context length is 65536 tokens. However, you requested 65536 output tokens and your prompt contains 77409 characters",
            Some(65536 - 25803),
        ),
        (
            "This model's maximum context length is 131072 tokens. However, you requested 65536 output tokens and your prompt contains at least 65537 input tokens",
            Some(65535),
        ),
        (
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            None,
        ),
        ("rate limited", None),
    ];
    for (msg, want) in cases {
        assert_eq!(parse_available_output_tokens(msg), *want, "{msg}");
    }
}

#[test]
fn output_cap_errors_are_told_apart_from_input_overflow() {
    assert!(is_output_cap_error(
        "max_tokens must be less than or equal to 8192"
    ));
    assert!(is_output_cap_error(
        "Range of max_tokens should be [1, 65536]"
    ));
    assert!(!is_output_cap_error(
        "prompt is too long; reduce max_tokens or the prompt"
    ));
    assert!(!is_output_cap_error(
        "maximum context length is 8192 tokens"
    ));
}
