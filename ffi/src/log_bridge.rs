//! Forwarding of the library's `log` records to the host app.
//!
//! One process-wide `log::Log` implementation is installed on first use. A record goes to the foreign
//! [`LogSink`] if one is registered with [`set_log_sink`]; otherwise to the platform log (logcat on Android,
//! os_log on iOS; dropped on other hosts). Records above the level given to `set_log_sink` (or
//! [`DEFAULT_PLATFORM_LEVEL`] for the platform log) are filtered out before any formatting.
//!
//! If the host process already installed another `log` logger, that one keeps receiving the records and the
//! sink is never called; [`set_log_sink`] then returns `false`.

use std::sync::{Arc, OnceLock, RwLock};

use crate::boundary::guarded;
use crate::error::NetronError;
use crate::platform_log;

/// Level the platform log gets when no sink has been registered.
pub const DEFAULT_PLATFORM_LEVEL: log::LevelFilter = log::LevelFilter::Info;

/// Severity of a log record, most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

/// One log record from the library.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct LogRecord {
    pub level: LogLevel,
    /// The Rust module that logged (e.g. `netron_ocr_ffi::capture`).
    pub target: String,
    pub message: String,
}

/// Receives the library's log records; implemented by the host app (Kotlin, Swift, Python).
///
/// `log` is called synchronously on whichever thread logged, possibly several at once. It must not call back into
/// this library. An exception it throws is caught at the boundary of the call that logged.
#[uniffi::export(callback_interface)]
pub trait LogSink: Send + Sync {
    fn log(&self, record: LogRecord);
}

struct Bridge {
    sink: RwLock<Option<Arc<dyn LogSink>>>,
}

static BRIDGE: Bridge = Bridge {
    sink: RwLock::new(None),
};
/// Whether `log::set_logger(&BRIDGE)` succeeded; decided once per process.
static INSTALLED: OnceLock<bool> = OnceLock::new();

impl log::Log for Bridge {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        // Clone the Arc and drop the lock before calling out, so a slow sink never blocks `set_log_sink`.
        let sink = self
            .sink
            .read()
            .map(|s| s.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone());
        match sink {
            Some(sink) => sink.log(LogRecord {
                level: record.level().into(),
                target: record.target().to_owned(),
                message: record.args().to_string(),
            }),
            None => platform_log::write(record),
        }
    }

    fn flush(&self) {}
}

/// Installs the bridge as the process's `log` logger (once); returns whether the bridge is the active logger.
pub(crate) fn install() -> bool {
    *INSTALLED.get_or_init(|| {
        let ok = log::set_logger(&BRIDGE).is_ok();
        if ok {
            log::set_max_level(DEFAULT_PLATFORM_LEVEL);
        }
        ok
    })
}

/// Registers `sink` for every record at `max_level` or more severe, replacing any previous sink.
///
/// Returns `true` when the sink is active, `false` when another `log` logger owns the process (see the module
/// documentation).
#[uniffi::export]
pub fn set_log_sink(sink: Box<dyn LogSink>, max_level: LogLevel) -> Result<bool, NetronError> {
    guarded(|| {
        let active = install();
        *BRIDGE.sink.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::from(sink));
        if active {
            log::set_max_level(max_level.into());
        }
        Ok(active)
    })
}

/// Removes the registered sink; records go to the platform log again at [`DEFAULT_PLATFORM_LEVEL`].
#[uniffi::export]
pub fn clear_log_sink() -> Result<(), NetronError> {
    guarded(|| {
        *BRIDGE.sink.write().unwrap_or_else(|p| p.into_inner()) = None;
        if install() {
            log::set_max_level(DEFAULT_PLATFORM_LEVEL);
        }
        Ok(())
    })
}

impl From<log::Level> for LogLevel {
    fn from(level: log::Level) -> Self {
        match level {
            log::Level::Error => LogLevel::Error,
            log::Level::Warn => LogLevel::Warn,
            log::Level::Info => LogLevel::Info,
            log::Level::Debug => LogLevel::Debug,
            log::Level::Trace => LogLevel::Trace,
        }
    }
}

impl From<LogLevel> for log::LevelFilter {
    fn from(level: LogLevel) -> Self {
        match level {
            LogLevel::Error => log::LevelFilter::Error,
            LogLevel::Warn => log::LevelFilter::Warn,
            LogLevel::Info => log::LevelFilter::Info,
            LogLevel::Debug => log::LevelFilter::Debug,
            LogLevel::Trace => log::LevelFilter::Trace,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Collect(Arc<Mutex<Vec<LogRecord>>>);

    impl LogSink for Collect {
        fn log(&self, record: LogRecord) {
            self.0.lock().unwrap().push(record);
        }
    }

    #[test]
    fn sink_receives_records_at_or_above_its_level() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        assert!(set_log_sink(Box::new(Collect(seen.clone())), LogLevel::Info).unwrap());
        log::info!(target: "bridge_test", "hello {}", 42);
        log::debug!(target: "bridge_test", "filtered out");
        clear_log_sink().unwrap();
        log::warn!(target: "bridge_test", "after clear");
        let seen: Vec<_> = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.target == "bridge_test")
            .cloned()
            .collect();
        assert_eq!(
            seen,
            vec![LogRecord {
                level: LogLevel::Info,
                target: "bridge_test".into(),
                message: "hello 42".into()
            }]
        );
    }
}
