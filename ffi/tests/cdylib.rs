//! The shared library the bindings load: it is built next to the test binaries (`target/<profile>/deps/`)
//! whenever integration tests are built, and exports the UniFFI scaffolding and the contract-version check.
//! (ffi/test-all.sh relies on the first point: `cargo test --no-run` gives it the cdylib with the same
//! feature unification as the workspace tests, so no dependency is built twice. A test build does not copy it
//! up to `target/<profile>/`: a library there may be stale, so this test reads the one in `deps/`.)

use std::path::PathBuf;

fn cdylib() -> PathBuf {
    // target/<profile>/deps/cdylib-<hash> -> target/<profile>/deps/libnetron_ocr_ffi.so
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().expect("target/<profile>/deps");
    dir.join(format!(
        "{}netron_ocr_ffi{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ))
}

#[test]
fn cdylib_is_built_and_exports_the_scaffolding() {
    let path = cdylib();
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let has = |name: &str| bytes.windows(name.len()).any(|w| w == name.as_bytes());
    for symbol in [
        "ffi_netron_ocr_ffi_uniffi_contract_version",
        "uniffi_netron_ocr_ffi_fn_func_assess",
        "uniffi_netron_ocr_ffi_fn_func_debug_panic",
        "uniffi_netron_ocr_ffi_fn_constructor_scanner_new",
        "uniffi_netron_ocr_ffi_fn_method_capturesession_push_planes",
        "uniffi_netron_ocr_ffi_fn_method_scanner_scan_file",
    ] {
        assert!(has(symbol), "{} does not export {symbol}", path.display());
    }
}
