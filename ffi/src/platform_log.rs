//! The platform's own log, used when the host app registered no [`crate::log_bridge::LogSink`]: logcat on
//! Android, os_log on iOS. On other targets records without a sink are dropped (a desktop host that wants them
//! registers a sink).

/// Writes one record to the platform log.
pub(crate) fn write(record: &log::Record) {
    #[cfg(target_os = "android")]
    crate::android::write_logcat(record);
    #[cfg(target_os = "ios")]
    crate::oslog::write(record);
    #[cfg(not(any(target_os = "android", target_os = "ios")))]
    let _ = record;
}

/// The record's text as a C string: `target: message`, interior NULs replaced, cut to `max_bytes` on a char
/// boundary (logcat drops the tail of lines over about 4 KB anyway).
#[cfg_attr(not(any(target_os = "android", target_os = "ios")), allow(dead_code))]
pub(crate) fn c_text(record: &log::Record, max_bytes: usize) -> std::ffi::CString {
    let mut text = format!("{}: {}", record.target(), record.args()).replace('\0', "\u{FFFD}");
    if text.len() > max_bytes {
        let mut cut = max_bytes;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    std::ffi::CString::new(text).expect("NULs were replaced")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_text_replaces_nul_and_cuts_on_char_boundary() {
        let args = format_args!("a\0b ééé");
        let record = log::Record::builder().args(args).target("t").build();
        let full = c_text(&record, 1000);
        assert_eq!(full.to_str().unwrap(), "t: a\u{FFFD}b ééé");
        // "t: a" (4) + U+FFFD (3) + "b " (2) = 9 bytes; 10 would split the first 'é'.
        assert_eq!(c_text(&record, 10).to_str().unwrap(), "t: a\u{FFFD}b ");
    }
}
