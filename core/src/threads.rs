//! Model runs spread over threads. The detector's tiles, the classifier's title crops and the OCR's text crops are
//! independent items: [`map_in_order`] runs one function over them on a few scoped threads and returns the
//! results in the items' order, so a stage's output never depends on its thread count (each item runs on a fresh
//! tract state, as it does on one thread; the plans are shared, see [`crate::models`]).
//!
//! The stages take their count from `threads` in [`crate::detect::DetectParams`],
//! [`crate::classify::ClassifyParams`] and [`crate::read::ReadParams`]: `0` stands for [`auto_threads`].

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;

/// Most threads that `threads: 0` uses: a phone's big cores, leaving the rest to the camera and the UI.
pub const AUTO_MAX_THREADS: usize = 4;

/// The thread count `threads: 0` stands for: the machine's available parallelism, at most
/// [`AUTO_MAX_THREADS`], and 1 when it cannot be known.
pub fn auto_threads() -> usize {
    thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(AUTO_MAX_THREADS)
}

/// The threads a stage asked for `threads` uses: `threads` itself, or [`auto_threads`] for `0`.
pub fn resolve(threads: usize) -> usize {
    if threads == 0 {
        auto_threads()
    } else {
        threads
    }
}

/// `f` applied to every item of `items`, on up to `threads` threads ([`resolve`]; the calling thread is one of
/// them), results in the items' order. Each thread takes the next item not yet taken, so items of unequal cost
/// balance. On failure the error returned is that of the first failing item in the items' order, as a loop
/// would return it: items after a failure may be skipped, items before it all run. One thread, or one item, runs
/// in the calling thread without spawning. A panic in `f` propagates to the caller.
pub fn map_in_order<T, R, E, F>(threads: usize, items: &[T], f: F) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
    F: Fn(&T) -> Result<R, E> + Sync,
{
    let threads = resolve(threads).min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let done: Mutex<Vec<(usize, Result<R, E>)>> = Mutex::new(Vec::with_capacity(items.len()));
    let work = || {
        let mut mine = Vec::new();
        // Indices are handed out in increasing order, so every item before a failing one has been taken, and
        // each taken item runs to its end.
        while !failed.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            let result = f(item);
            if result.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            mine.push((i, result));
        }
        let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
        done.append(&mut mine);
    };
    thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(work);
        }
        work();
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_at_every_thread_count() {
        let items: Vec<u64> = (0..37).collect();
        let serial: Vec<u64> = items.iter().map(|x| x * x + 1).collect();
        for threads in [0, 1, 2, 3, 8, 64] {
            let out = map_in_order(threads, &items, |x| Ok::<_, ()>(x * x + 1)).unwrap();
            assert_eq!(out, serial, "threads {threads}");
        }
    }

    #[test]
    fn the_first_failure_in_order_is_returned() {
        let items: Vec<u32> = (0..50).collect();
        for threads in [1, 2, 4] {
            let out = map_in_order(threads, &items, |&x| {
                if x == 7 || x == 30 {
                    Err(x)
                } else {
                    Ok(x)
                }
            });
            assert_eq!(out, Err(7), "threads {threads}");
        }
    }

    #[test]
    fn no_items_and_one_item() {
        let none: [u8; 0] = [];
        assert_eq!(map_in_order(4, &none, |&x| Ok::<_, ()>(x)), Ok(vec![]));
        assert_eq!(
            map_in_order(4, &[5u8], |&x| Ok::<_, ()>(x + 1)),
            Ok(vec![6])
        );
    }

    #[test]
    fn items_run_on_several_threads() {
        let items: Vec<u32> = (0..8).collect();
        let ids = map_in_order(2, &items, |_| {
            thread::sleep(std::time::Duration::from_millis(20));
            Ok::<_, ()>(thread::current().id())
        })
        .unwrap();
        let first = ids[0];
        assert!(
            ids.iter().any(|&id| id != first),
            "all 8 items ran on one thread"
        );
    }

    #[test]
    fn zero_stands_for_a_bounded_automatic_count() {
        let n = resolve(0);
        assert!((1..=AUTO_MAX_THREADS).contains(&n));
        assert_eq!(resolve(3), 3);
    }
}
