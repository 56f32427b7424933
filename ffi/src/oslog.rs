//! os_log backend (iOS only): records go to the unified log under subsystem `dev.netronocr`, category `core`.
//! Levels: error → `OS_LOG_TYPE_ERROR`, warn and info → `OS_LOG_TYPE_DEFAULT`, debug and trace →
//! `OS_LOG_TYPE_DEBUG`.

use std::ffi::c_void;
use std::sync::OnceLock;

extern "C" {
    // src/oslog_shim.c
    fn netron_os_log_create(
        subsystem: *const std::ffi::c_char,
        category: *const std::ffi::c_char,
    ) -> *mut c_void;
    fn netron_os_log_write(log: *mut c_void, kind: u8, message: *const std::ffi::c_char);
}

/// An `os_log_t`; os_log handles are thread-safe and this one is never released.
struct Handle(*mut c_void);
// SAFETY: os_log_t objects may be used from any thread (Apple documents os_log as thread-safe).
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

static HANDLE: OnceLock<Handle> = OnceLock::new();

pub(crate) fn write(record: &log::Record) {
    let handle = HANDLE.get_or_init(|| {
        // SAFETY: both arguments are NUL-terminated literals; the call has no other preconditions.
        Handle(unsafe { netron_os_log_create(c"dev.netronocr".as_ptr(), c"core".as_ptr()) })
    });
    let kind = match record.level() {
        log::Level::Error => 0x10,
        log::Level::Warn | log::Level::Info => 0x00,
        log::Level::Debug | log::Level::Trace => 0x02,
    };
    let text = crate::platform_log::c_text(record, 4000);
    // SAFETY: `handle.0` came from os_log_create; `text` is a valid C string that outlives the call.
    unsafe { netron_os_log_write(handle.0, kind, text.as_ptr()) };
}
