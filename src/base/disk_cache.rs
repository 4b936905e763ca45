//! The on-disk cache: one JSON file per result, in a folder per kind of
//! result, named by a stable hash of the result's key and holding the key as
//! text, so a changed input never reads a stale result. Reads that fail
//! (missing, unreadable, another key) are misses; writes that fail cost only
//! the cache.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where results are cached: `$PLANNER_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/planner`, else `~/.cache/planner`.
pub(crate) fn default_cache_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("PLANNER_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("planner")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("planner")))
}

/// 64-bit FNV-1a, fed piece by piece: a hash that stays the same across
/// builds and platforms.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        self.0 = bytes.iter().fold(self.0, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    /// A float by its bits (so 0.1 + 0.2 and 0.3 differ, as they should).
    pub(crate) fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    pub(crate) fn finish(self) -> u64 {
        self.0
    }
}

/// FNV-1a of `bytes`.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv::default();
    h.bytes(bytes);
    h.finish()
}

/// A 128-bit digest of `key` as 32 hex digits (FNV-1a and a SplitMix64
/// word hash): what a file holds in place of a key too long to store in
/// every file.
pub(crate) fn digest(key: &str) -> String {
    let mut h: u64 = 0x9E37_79B9_7F4A_7C15;
    for chunk in key.as_bytes().chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        let mut z = h ^ u64::from_le_bytes(word);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h = (z ^ (z >> 31)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    }
    format!("{:016x}{h:016x}", fnv1a(key.as_bytes()))
}

/// Deletes the least recently used files of `dir/folder` (by modification
/// time: a read marks its file used) until the folder holds at most
/// `max_bytes`; failures are ignored.
pub(crate) fn prune(dir: &Path, folder: &str, max_bytes: u64) {
    let Ok(entries) = std::fs::read_dir(dir.join(folder)) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let meta = e.metadata().ok()?;
            meta.is_file()
                .then(|| Some((meta.modified().ok()?, meta.len(), e.path())))?
        })
        .collect();
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    if total <= max_bytes {
        return;
    }
    files.sort();
    for (_, len, path) in files {
        if total <= max_bytes {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
        }
    }
}

/// Marks a file used now (for [`prune`]); failures are ignored.
fn touch(path: &Path) {
    if let Ok(f) = std::fs::File::options().append(true).open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

#[derive(Serialize, Deserialize)]
struct Cached<T> {
    key: String,
    value: T,
}

fn cache_path(dir: &Path, folder: &str, key: &str) -> PathBuf {
    dir.join(folder)
        .join(format!("{:016x}.json", fnv1a(key.as_bytes())))
}

/// The value cached under `key` in `dir/folder`, or `compute()` (then cached).
pub(crate) fn cached<T: Serialize + DeserializeOwned>(
    dir: Option<&Path>,
    folder: &str,
    key: &str,
    compute: impl FnOnce() -> T,
) -> T {
    if let Some(v) = read_cached(dir, folder, key) {
        return v;
    }
    let v = compute();
    write_cached(dir, folder, key, &v);
    v
}

/// The value cached under `key` in `dir/folder`, if any.
pub(crate) fn read_cached<T: DeserializeOwned>(
    dir: Option<&Path>,
    folder: &str,
    key: &str,
) -> Option<T> {
    read_stored(dir, folder, key, key)
}

/// The value stored under `key` whose file names it as `stored_key` (the
/// key itself, or its [`digest`]); the file is marked used.
pub(crate) fn read_stored<T: DeserializeOwned>(
    dir: Option<&Path>,
    folder: &str,
    key: &str,
    stored_key: &str,
) -> Option<T> {
    let path = cache_path(dir?, folder, key);
    let text = std::fs::read_to_string(&path).ok()?;
    let cached: Cached<T> = serde_json::from_str(&text).ok()?;
    let hit = cached.key == stored_key;
    if hit {
        touch(&path);
    }
    hit.then_some(cached.value)
}

/// Writes through a temporary file and a rename, so a reader never sees half
/// a file; failures only cost the cache.
pub(crate) fn write_cached<T: Serialize>(dir: Option<&Path>, folder: &str, key: &str, value: &T) {
    write_stored(dir, folder, key, key, value);
}

/// [`write_cached`], the file naming its key as `stored_key`.
pub(crate) fn write_stored<T: Serialize>(
    dir: Option<&Path>,
    folder: &str,
    key: &str,
    stored_key: &str,
    value: &T,
) {
    // One temporary name per write, so threads of one process (a sweep's
    // variants) never write into each other's file.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let Some(dir) = dir else { return };
    let path = cache_path(dir, folder, key);
    let Some(parent) = path.parent() else { return };
    if std::fs::create_dir_all(parent).is_err() {
        return;
    }
    let cached = Cached {
        key: stored_key.to_string(),
        value,
    };
    let Ok(text) = serde_json::to_string(&cached) else {
        return;
    };
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
    // A failed write (disk full) or rename leaves no temporary behind.
    if std::fs::write(&tmp, text).is_err() || std::fs::rename(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_the_published_function_and_feeds_in_pieces() {
        // FNV-1a 64 test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        let mut h = Fnv::default();
        h.bytes(b"fo");
        h.bytes(b"obar");
        assert_eq!(h.finish(), fnv1a(b"foobar"));
    }

    #[test]
    fn a_value_is_read_back_under_its_key_only() {
        let dir = std::env::temp_dir().join(format!("planner-disk-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut computed = 0;
        let v: Vec<f64> = cached(Some(&dir), "t", "k1", || {
            computed += 1;
            vec![0.1 + 0.2, 1e-300]
        });
        let again: Vec<f64> = cached(Some(&dir), "t", "k1", || {
            computed += 1;
            vec![]
        });
        assert_eq!((v, computed), (again, 1));
        assert_eq!(read_cached::<Vec<f64>>(Some(&dir), "t", "k2"), None);
        assert_eq!(read_cached::<Vec<f64>>(None, "t", "k1"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_digest_stands_for_its_key_and_pruning_keeps_the_recently_used() {
        assert_eq!(digest("a|b").len(), 32);
        assert_ne!(digest("a|b"), digest("a|c"));
        assert_eq!(digest("a|b"), digest("a|b"));
        let dir = std::env::temp_dir().join(format!("planner-prune-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (i, k) in ["old", "mid", "new"].into_iter().enumerate() {
            write_stored(Some(&dir), "t", k, &digest(k), &vec![0u8; 100]);
            let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000 * (i as u64 + 1));
            let f = std::fs::File::options()
                .append(true)
                .open(cache_path(&dir, "t", k))
                .unwrap();
            f.set_modified(at).unwrap();
        }
        // Reading "old" makes it the most recently used.
        let read: Option<Vec<u8>> = read_stored(Some(&dir), "t", "old", &digest("old"));
        assert!(read.is_some());
        assert_eq!(
            read_stored::<Vec<u8>>(Some(&dir), "t", "old", "another key"),
            None
        );
        let size = |k: &str| std::fs::metadata(cache_path(&dir, "t", k)).unwrap().len();
        prune(&dir, "t", size("old") + size("new") + 1);
        let kept = |k: &str| cache_path(&dir, "t", k).exists();
        assert_eq!((kept("old"), kept("mid"), kept("new")), (true, false, true));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
