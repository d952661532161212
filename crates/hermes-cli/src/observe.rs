//! Metrics and traces for this process (`observability:` in config.yaml, the
//! `OTEL_*` variables): every session's events reach the [`Observer`]
//! through the session runtime's event tap, beside the log files where a
//! front-end keeps them.

use std::sync::Arc;
use std::time::Duration;

use hermes_observe::{ObserveSettings, Observer};
use hermes_session::{Services, Setup};

use crate::logging::LogFiles;

/// How long an exiting process waits for its last spans to reach the collector.
const FLUSH_WAIT: Duration = Duration::from_secs(3);

/// The settings `setup` asks for; `serving` processes (the gateway) count
/// metrics, a terminal session only traces.
pub(crate) fn settings(setup: &Setup, serving: bool) -> ObserveSettings {
    let env = |name: &str| setup.env.get(name).map(str::to_owned);
    let mut settings = ObserveSettings::from_config(&setup.config.raw, &env);
    settings.metrics &= serving;
    settings
}

/// The observer `setup` asks for, if any (start inside the tokio runtime).
pub(crate) fn observer(setup: &Setup, serving: bool) -> Option<Arc<Observer>> {
    Observer::new(&settings(setup, serving)).map(Arc::new)
}

/// Shows every session's events to the log files and the observer (either may be absent).
pub(crate) fn tap(
    services: &Services,
    files: Option<Arc<LogFiles>>,
    observer: Option<Arc<Observer>>,
) {
    if files.is_none() && observer.is_none() {
        return;
    }
    services.set_event_tap(Arc::new(move |session, event| {
        if let Some(files) = &files {
            files.record(session.id, event);
        }
        if let Some(observer) = &observer {
            observer.record(session.conversation, session.id, session.source, event);
        }
    }));
}

/// Every session of a front-end logs through `files`, tagged with its id,
/// and is traced (and, when `serving`, counted) as configured; the process's
/// `tracing` events go to `files` too.
pub(crate) fn tap_sessions(
    services: &Services,
    files: &Arc<LogFiles>,
    serving: bool,
) -> Option<Arc<Observer>> {
    let observer = observer(services.setup(), serving);
    tap(services, Some(files.clone()), observer.clone());
    crate::tracing_log::collect(files.clone());
    observer
}

/// Sends the spans not yet sent before the process exits.
pub(crate) async fn flush(observer: Option<&Arc<Observer>>) {
    if let Some(observer) = observer {
        observer.flush(FLUSH_WAIT).await;
    }
}
