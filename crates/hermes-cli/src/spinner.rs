//! The printer task of a turn: renders events and, in rich mode, a spinner
//! while the model is working and nothing arrives (before the first token,
//! and between a tool round and the next answer).

use std::io::Write;
use std::time::{Duration, Instant};

use hermes_protocol::Event;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::render::Renderer;

/// Frames of the spinner.
const FRAMES: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Quiet time before the spinner shows, so fast streams never flicker.
const SPINNER_DELAY: Duration = Duration::from_millis(150);

/// Renders every event from `rx` until the channel closes.
pub async fn print_events(
    mut renderer: Renderer,
    mut rx: UnboundedReceiver<Event>,
    mut log: Option<crate::logging::AgentLog>,
) {
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
    let mut record = |event: &Event| {
        if let Some(log) = log.as_mut() {
            log.record(event);
        }
    };
    if !renderer.is_rich() {
        while let Some(event) = rx.recv().await {
            record(&event);
            let _ = renderer.render(&event, &mut out, &mut err);
        }
        let _ = renderer.finish(&mut out, &mut err);
        return;
    }
    let mut tick = tokio::time::interval(Duration::from_millis(90));
    let mut last = Instant::now();
    let mut frame = 0usize;
    let mut shown = false;
    loop {
        tokio::select! {
            event = rx.recv() => {
                let Some(event) = event else { break };
                record(&event);
                if shown {
                    let _ = write!(err, "\r\x1b[2K");
                    shown = false;
                }
                let _ = renderer.render(&event, &mut out, &mut err);
                last = Instant::now();
            }
            _ = tick.tick() => {
                if last.elapsed() < SPINNER_DELAY {
                    continue;
                }
                if let Some(label) = renderer.spinner_label() {
                    frame = (frame + 1) % FRAMES.len();
                    let _ = write!(err, "\r\x1b[2K\x1b[2m{} {label}\x1b[0m", FRAMES[frame]);
                    let _ = err.flush();
                    shown = true;
                }
            }
        }
    }
    if shown {
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
    }
    let _ = renderer.finish(&mut out, &mut err);
}
