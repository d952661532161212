use super::*;

fn long_history(n: usize) -> Vec<Message> {
    let mut v = vec![Message::system("sys")];
    for i in 0..n {
        v.push(Message::user(format!("question {i} {}", "x".repeat(400))));
        v.push(Message::assistant(format!(
            "answer {i} {}",
            "y".repeat(400)
        )));
    }
    v.push(Message::user("latest"));
    v
}

fn run(
    message: &str,
    messages: &[Message],
    ctx: &mut u64,
    limit: &mut Option<u64>,
    attempts: &mut u32,
) -> Recovery {
    recover(
        message,
        messages,
        &[],
        OverflowState {
            context_length: ctx,
            confirmed_limit: limit,
            attempts,
        },
    )
}

#[test]
fn reported_limit_steps_down_and_asks_for_compression() {
    let msgs = long_history(40);
    let (mut ctx, mut limit, mut attempts) = (128_000, None, 0);
    let r = run(
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        &msgs,
        &mut ctx,
        &mut limit,
        &mut attempts,
    );
    assert_eq!((ctx, limit, attempts), (8192, Some(8192), 1));
    assert_eq!(
        r,
        Recovery::Compress {
            tail_budget: (8192.0 * 0.2) as usize,
            lowered: true
        }
    );
}

#[test]
fn unreported_limit_keeps_the_window() {
    let msgs = long_history(40);
    let (mut ctx, mut limit, mut attempts) = (128_000, None, 0);
    let r = run(
        "prompt is too long",
        &msgs,
        &mut ctx,
        &mut limit,
        &mut attempts,
    );
    assert_eq!((ctx, limit), (128_000, None));
    // Bounded by half of what was just sent, not the (large) window.
    let sent = approx_tokens(&msgs);
    assert_eq!(
        r,
        Recovery::Compress {
            tail_budget: sent / 2,
            lowered: false
        }
    );
}

#[test]
fn output_cap_errors_shrink_max_tokens_or_give_up() {
    let msgs = long_history(2);
    let (mut ctx, mut limit, mut attempts) = (200_000, None, 0);
    let r = run(
        "max_tokens: 32768 > context_window: 200000 - input_tokens: 190000 = available_tokens: 10000",
        &msgs,
        &mut ctx,
        &mut limit,
        &mut attempts,
    );
    assert_eq!(
        r,
        Recovery::ShrinkOutput {
            max_tokens: 10000 - 64,
            available: 10000
        }
    );
    let r = run(
        "max_tokens must be less than or equal to 4096",
        &msgs,
        &mut ctx,
        &mut limit,
        &mut attempts,
    );
    assert!(
        matches!(&r, Recovery::GiveUp(m) if m.contains("model.max_tokens")),
        "{r:?}"
    );
}

#[test]
fn gives_up_after_the_attempt_limit() {
    let msgs = long_history(40);
    let (mut ctx, mut limit, mut attempts) = (8192, None, MAX_COMPACTIONS);
    let r = run(
        "context length exceeded",
        &msgs,
        &mut ctx,
        &mut limit,
        &mut attempts,
    );
    assert!(
        matches!(&r, Recovery::GiveUp(m) if m.contains("3 compaction attempts")),
        "{r:?}"
    );
}
