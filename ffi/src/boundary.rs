//! The panic firewall: every exported function runs its body through `guarded`, so a panic never unwinds into
//! foreign code. It becomes [`NetronError::Internal`] carrying the panic message instead.
//!
//! This relies on `panic = "unwind"` (the default); a profile with `panic = "abort"` would turn every such bug
//! into a process abort, so the release profiles of this workspace must not set it.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::NetronError;

/// Runs `body`, turning a panic into `Err(NetronError::Internal { .. })`.
///
/// `AssertUnwindSafe` is sound here because the state a body can leave half-updated is only behind `Mutex`es
/// (poisoning is handled where they are locked) or is owned by the body itself.
pub(crate) fn guarded<T>(body: impl FnOnce() -> Result<T, NetronError>) -> Result<T, NetronError> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            log::error!(target: "netron_ocr_ffi", "panic caught at the FFI boundary: {message}");
            Err(NetronError::Internal(format!("panic: {message}")))
        }
    }
}

/// The text of a panic payload (`panic!` gives a `&str` or a `String`).
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// Diagnostics: panics inside the library on purpose, so that foreign test suites can check that a panic comes
/// back as `NetronError.Internal` and the process survives. Always fails; never call it in production code.
#[uniffi::export]
pub fn debug_panic(message: String) -> Result<(), NetronError> {
    guarded(|| panic!("debug_panic: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_becomes_internal_error() {
        let err = debug_panic("boom".into()).unwrap_err();
        match err {
            NetronError::Internal(m) => assert!(m.contains("debug_panic: boom"), "{m}"),
            other => panic!("expected Internal, got {other:?}"),
        }
    }

    #[test]
    fn ok_and_err_pass_through() {
        assert_eq!(guarded(|| Ok(7)).unwrap(), 7);
        let e = guarded::<()>(|| Err(NetronError::InvalidArgument("x".into()))).unwrap_err();
        assert!(matches!(e, NetronError::InvalidArgument(_)));
    }
}
