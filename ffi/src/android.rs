//! Android only: the logcat backend of the log bridge, and `JNI_OnLoad`, which installs it.
//!
//! `JNI_OnLoad` runs only when the library is loaded with `System.loadLibrary("netron_ocr_ffi")`; JNA's `dlopen`
//! (which the generated Kotlin bindings use) does not call it. The Kotlin facade `NetronScanner` therefore calls
//! `System.loadLibrary` before touching the bindings; JNA then finds the library already loaded.

use std::ffi::{c_char, c_int, c_void};

use jni::sys::{jint, JavaVM as RawJavaVm};
use jni::{JNIVersion, JavaVM};

/// Logcat tag of every record.
const TAG: &std::ffi::CStr = c"netron-ocr";

// android/log.h priorities.
const ANDROID_LOG_VERBOSE: c_int = 2;
const ANDROID_LOG_DEBUG: c_int = 3;
const ANDROID_LOG_INFO: c_int = 4;
const ANDROID_LOG_WARN: c_int = 5;
const ANDROID_LOG_ERROR: c_int = 6;

#[link(name = "log")]
extern "C" {
    fn __android_log_write(prio: c_int, tag: *const c_char, text: *const c_char) -> c_int;
}

/// Writes one record to logcat under [`TAG`] (lines over 4000 bytes are cut).
pub(crate) fn write_logcat(record: &log::Record) {
    let prio = match record.level() {
        log::Level::Error => ANDROID_LOG_ERROR,
        log::Level::Warn => ANDROID_LOG_WARN,
        log::Level::Info => ANDROID_LOG_INFO,
        log::Level::Debug => ANDROID_LOG_DEBUG,
        log::Level::Trace => ANDROID_LOG_VERBOSE,
    };
    let text = crate::platform_log::c_text(record, 4000);
    // SAFETY: tag and text are valid NUL-terminated strings that outlive the call.
    unsafe { __android_log_write(prio, TAG.as_ptr(), text.as_ptr()) };
}

/// Called by the JVM on `System.loadLibrary`: remembers the VM (jni's `JavaVM::singleton()`, for later JNI use)
/// and installs the log bridge so records reach logcat before any sink is registered.
///
/// # Safety
/// Called by the JVM only, with a valid `JavaVM` pointer.
#[no_mangle]
pub unsafe extern "system" fn JNI_OnLoad(vm: *mut RawJavaVm, _reserved: *mut c_void) -> jint {
    // A panic must not unwind into the JVM; if anything here fails, logging simply stays off.
    let _ = std::panic::catch_unwind(|| {
        if !vm.is_null() {
            // SAFETY: the JVM passes its own, valid VM pointer.
            let _ = unsafe { JavaVM::from_raw(vm) };
        }
        if crate::log_bridge::install() {
            log::info!(target: "netron_ocr_ffi", "netron-ocr {} loaded", env!("CARGO_PKG_VERSION"));
        }
    });
    JNIVersion::V1_6.into()
}
