//! Compiles the os_log shim for iOS targets. On every other target this does nothing.
//! (`os_log_with_type` is a C macro that builds a compile-time format buffer, so it cannot be called from Rust
//! directly; the shim is the macro's one call site.)
fn main() {
    println!("cargo:rerun-if-changed=src/oslog_shim.c");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("ios") {
        cc::Build::new()
            .file("src/oslog_shim.c")
            .compile("netron_oslog_shim");
    }
}
