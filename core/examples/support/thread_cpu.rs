//! This thread's CPU time, for the timing examples (`#[path]`-included; not an example of its own).

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
}

/// CPU time of the calling thread, seconds (Linux x86_64/aarch64 `CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu() -> f64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec (64-bit `time_t` and `long` on the targets above).
    let rc = unsafe { clock_gettime(3, &mut ts) };
    if rc == 0 {
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    } else {
        f64::NAN
    }
}
