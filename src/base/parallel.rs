//! Independent work spread over the machine's cores: each item is computed on
//! one scoped thread, the threads taking items as they finish the last, and
//! the results come back in item order, so the output never depends on how
//! the work was split.

/// Worker threads: the cores available (at least one).
pub(crate) fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// `f` applied to every item on up to [`workers`] threads, results in item
/// order. Each thread takes the next item not yet taken, so a thread that
/// drew cheap items takes more of them (the results do not depend on which
/// thread computed them). An item whose computation panics comes back as
/// `None`; its thread goes on with the next.
pub(crate) fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
) -> Vec<Option<R>> {
    let threads = workers().min(items.len()).max(1);
    let f = &f;
    let next = &std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            return done;
                        };
                        // A panic loses this item only: the thread goes on.
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(item)));
                        if let Ok(r) = r {
                            done.push((i, r));
                        }
                    }
                })
            })
            .collect();
        let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
        for handle in handles {
            for (i, r) in handle.join().unwrap_or_default() {
                out[i] = Some(r);
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_item_order() {
        let items: Vec<u64> = (0..1000).collect();
        let squares = map_in_order(&items, |&x| x * x);
        assert!(squares
            .iter()
            .enumerate()
            .all(|(i, s)| *s == Some((i * i) as u64)));
        assert!(map_in_order(&[] as &[u64], |&x| x).is_empty());
    }

    #[test]
    fn an_item_that_panics_comes_back_empty_and_the_rest_are_computed() {
        let items: Vec<u64> = (0..50).collect();
        let out = map_in_order(&items, |&x| {
            assert!(x != 7, "item 7 fails");
            x + 1
        });
        assert_eq!(out[7], None);
        assert!(out
            .iter()
            .enumerate()
            .all(|(i, r)| i == 7 || *r == Some(i as u64 + 1)));
    }
}
