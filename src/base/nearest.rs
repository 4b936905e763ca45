//! The known name nearest an unknown one, for "did you mean": a scenario's
//! key, a profile id, a tier's name.

/// The name of `known` nearest `given`: fewer edits away than a third of
/// `given`'s length, or beginning with it (`size` for `size_ms`) or it with
/// one, at least three characters long; `None` when none is that near.
pub(crate) fn nearest<'a>(
    given: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let known: Vec<&str> = known.into_iter().collect();
    let (best, d) = known
        .iter()
        .map(|&n| (n, edit_distance(given, n)))
        .min_by_key(|&(n, d)| (d, n.len()))?;
    if d > 0 && d * 3 < given.chars().count() {
        return Some(best);
    }
    let prefix = |a: &str, b: &str| a.len() >= 3 && b.starts_with(a);
    known
        .into_iter()
        .find(|&n| n != given && (prefix(given, n) || prefix(n, given)))
}

/// Edits (insertions, deletions, substitutions and swaps of two neighbours)
/// from `a` to `b`, by characters: the optimal string alignment distance.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_are_counted_by_character() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("cuont", "count"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("slot_minute", "slot_minutes"), 1);
    }

    #[test]
    fn the_nearest_name_is_suggested_only_when_near() {
        assert_eq!(nearest("l40x", ["l4", "l40s", "h100-sxm"]), Some("l40s"));
        assert_eq!(nearest("chatt", ["chat", "batch"]), Some("chat"));
        assert_eq!(nearest("size", ["size_ms", "kind"]), Some("size_ms"));
        assert_eq!(nearest("zzz", ["count", "name"]), None);
        assert_eq!(nearest("chat", ["chat"]), None);
    }
}
