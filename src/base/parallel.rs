//! Independent work spread over the machine's cores: each item is computed on
//! one scoped thread and the results come back in item order, so the output
//! never depends on how the work was split.

/// Worker threads: the cores available (at least one).
pub(crate) fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// `f` applied to every item on up to [`workers`] threads (item `i` on thread
/// `i mod workers`), results in item order. A worker that panics loses only
/// its own items, which come back as `None`.
pub(crate) fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
) -> Vec<Option<R>> {
    let threads = workers().min(items.len()).max(1);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|w| {
                scope.spawn(move || {
                    items
                        .iter()
                        .enumerate()
                        .skip(w)
                        .step_by(threads)
                        .map(|(i, item)| (i, f(item)))
                        .collect::<Vec<_>>()
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
}
