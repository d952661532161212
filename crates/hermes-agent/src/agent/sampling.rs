//! One model call: compress first if the prompt is over the threshold, stream
//! the reply, and on failure do what [`decide`] says (compress, rotate the
//! key, wait and retry, fall back, fail).

use futures_util::StreamExt;
use hermes_llm::{
    ChatRequest, Completion, ErrorContext, FailoverReason, LlmError, StreamAccumulator,
    StreamDelta, classify_error,
};
use hermes_protocol::Event;
use tokio_util::sync::CancellationToken;

use super::{Agent, AgentError};
use crate::EventSink;
use crate::budget::CallKind;
use crate::recovery::{Recovery, RetryState, decide};
use crate::resilience::approx_tokens;
use crate::wire;

impl Agent {
    /// The model call of one step: preflight compression, steer delivery, then
    /// the call with its recovery. Tools are offered unless this is the summary call.
    pub(super) async fn sample(
        &mut self,
        kind: CallKind,
        turn_start: usize,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Completion, AgentError> {
        let offer_tools = kind != CallKind::Summary;
        self.preflight(offer_tools, events, cancel).await?;
        self.drain_steer_before_call(turn_start, events);
        self.call_with_retry(offer_tools, events, cancel).await
    }

    /// One model call, retried, compacted and failed over as the classifier says.
    async fn call_with_retry(
        &mut self,
        offer_tools: bool,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Completion, AgentError> {
        let mut state = RetryState::default();
        let mut compactions = 0u32;
        loop {
            let started = std::time::Instant::now();
            let err = match self.call_model(offer_tools, events, cancel).await {
                Ok(done) => return Ok(self.accept(done, started, events)),
                Err(LlmError::Cancelled) => {
                    self.report_call("cancelled", started, Default::default(), events);
                    return Err(LlmError::Cancelled.into());
                }
                Err(e) => e,
            };
            let verdict = self.classify(&err);
            self.report_call(verdict.reason.as_str(), started, Default::default(), events);
            let reason = err.kind_phrase().unwrap_or(verdict.reason.phrase());
            // "cannot connect: Connection refused", "rate limited: slow down".
            let what = match err.kind_phrase() {
                Some(_) => hermes_llm::redact::redact_secrets(&err.summary()),
                None => format!("{reason}: {}", verdict.message),
            };
            state.can_fall_back = self.active + 1 < self.routes.len();
            state.rotation_refused = false;
            loop {
                match decide(&verdict, &state, &self.retry, self.timing.random()) {
                    Recovery::Compress => {
                        let shrunk = self
                            .recover_overflow(
                                &err.to_string(),
                                offer_tools,
                                &mut compactions,
                                events,
                                cancel,
                            )
                            .await;
                        match shrunk {
                            Err(AgentError::ContextExhausted(_))
                                if verdict.reason == FailoverReason::PayloadTooLarge =>
                            {
                                return Err(AgentError::PayloadTooLarge(err.to_string()));
                            }
                            other => other?,
                        }
                    }
                    Recovery::Rotate => {
                        let route = &self.routes[self.active];
                        if !route
                            .provider
                            .rotate_credential(verdict.status, verdict.retry_after)
                        {
                            state.rotation_refused = true;
                            continue;
                        }
                        let _ = events.send(Event::Status {
                            message: format!("{what} — switched to the next pooled API key"),
                        });
                    }
                    Recovery::Retry { delay, attempt } => {
                        let _ = events.send(Event::Status {
                            message: format!(
                                "{what} — retrying in {:.1}s (attempt {} of {})",
                                delay.as_secs_f64(),
                                attempt + 1,
                                self.retry.max_retries + 1
                            ),
                        });
                        tokio::select! {
                            () = self.timing.sleep(delay) => {}
                            () = cancel.cancelled() => return Err(LlmError::Cancelled.into()),
                        }
                        state.attempt = attempt;
                        state.waited += delay;
                    }
                    Recovery::FallBack => {
                        self.active += 1;
                        state = RetryState::default();
                        let next = &self.routes[self.active];
                        let _ = events.send(Event::Status {
                            message: format!(
                                "{what} — falling back to {} ({})",
                                next.provider.name(),
                                next.model
                            ),
                        });
                    }
                    Recovery::Fail => {
                        self.explain_refused_wait(&verdict, &state, reason, events);
                        return Err(err.into());
                    }
                }
                break;
            }
        }
    }

    /// A call that answered: reported, and the output cap and confirmed
    /// context window settled.
    fn accept(
        &mut self,
        done: Completion,
        started: std::time::Instant,
        events: &EventSink,
    ) -> Completion {
        self.report_call("ok", started, done.usage.unwrap_or_default(), events);
        self.output_cap = None;
        self.remember_confirmed_limit(events);
        done
    }

    /// What the classifier makes of a failed call on the active route.
    fn classify(&self, err: &LlmError) -> hermes_llm::classify::ClassifiedError {
        let route = &self.routes[self.active];
        classify_error(
            err,
            &ErrorContext {
                provider: route.provider.name(),
                model: &route.model,
                approx_tokens: approx_tokens(&self.messages),
                context_length: usize::try_from(self.compressor.context_length()).ok(),
                num_messages: self.messages.len(),
            },
        )
    }

    /// When the provider asked for a wait past the retry budget, says so.
    fn explain_refused_wait(
        &self,
        verdict: &hermes_llm::classify::ClassifiedError,
        state: &RetryState,
        reason: &str,
        events: &EventSink,
    ) {
        if let Some(asked) = verdict
            .retry_after
            .filter(|asked| verdict.retryable && state.waited + *asked > self.retry.max_total_wait)
        {
            let _ = events.send(Event::Status {
                message: format!(
                    "{reason}: the provider asked to wait {}s, past the retry \
                     budget of {}s (agent.api_retry_max_wait_seconds)",
                    asked.as_secs(),
                    self.retry.max_total_wait.as_secs()
                ),
            });
        }
    }

    /// Tells observers (metrics, traces) how one model call ended.
    fn report_call(
        &self,
        status: &str,
        started: std::time::Instant,
        usage: hermes_protocol::Usage,
        events: &EventSink,
    ) {
        let route = &self.routes[self.active];
        let _ = events.send(Event::ModelCall {
            provider: route.provider.name().to_owned(),
            model: route.model.clone(),
            status: status.to_owned(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            usage,
        });
    }

    async fn call_model(
        &self,
        offer_tools: bool,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let route = &self.routes[self.active];
        let request = ChatRequest {
            model: route.model.clone(),
            messages: self.with_turn_context(wire::sanitize(&self.messages)),
            tools: if offer_tools {
                self.tools.shared_schemas()
            } else {
                std::sync::Arc::default()
            },
            max_tokens: self.output_cap.or(self.options.max_tokens),
            temperature: self.options.temperature,
            tool_choice: Default::default(),
        };
        self.hooks_before_call(request.messages.len(), request.tools.len(), events)
            .await;
        let outcome = self.stream_reply(&request, events, cancel).await;
        self.hooks_after_call(outcome.as_ref(), events).await;
        outcome
    }

    /// Streams one reply, forwarding text and reasoning as they arrive,
    /// masked as the stored reply will be (a key split across chunks too).
    async fn stream_reply(
        &self,
        request: &ChatRequest,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let route = &self.routes[self.active];
        let mut stream = route.provider.stream(request, cancel).await?;
        let mut acc = StreamAccumulator::new();
        let mut text = crate::redaction::assistant_stream();
        let mut reasoning = crate::redaction::assistant_stream();
        while let Some(delta) = stream.next().await {
            let delta = delta?;
            match &delta {
                StreamDelta::Text(piece) => {
                    // What the model thought comes out before what it says.
                    send_reasoning(events, reasoning.finish());
                    send_text(events, text.push(piece));
                }
                StreamDelta::Reasoning(piece) => {
                    send_text(events, text.finish());
                    send_reasoning(events, reasoning.push(piece));
                }
                _ => {}
            }
            acc.push(&delta);
        }
        send_reasoning(events, reasoning.finish());
        send_text(events, text.finish());
        Ok(acc.finish())
    }
}

fn send_text(events: &EventSink, text: String) {
    if !text.is_empty() {
        let _ = events.send(Event::TextDelta { text });
    }
}

fn send_reasoning(events: &EventSink, text: String) {
    if !text.is_empty() {
        let _ = events.send(Event::ReasoningDelta { text });
    }
}
