//! `uniffi-bindgen`: generates the Python, Kotlin and Swift bindings of `netron-ocr-ffi` from the built cdylib
//! (library mode: `uniffi-bindgen generate --library <cdylib> --language <lang> --out-dir <dir> --no-format`).
fn main() {
    uniffi::uniffi_bindgen_main()
}
