//! What was read from a database, kept in memory for a while: by a text key, each value with the
//! time it was read, trusted for `ttl` (how long a write made elsewhere, by another node, may go
//! unseen). A map under a read-write lock, not a `moka` cache: these are looked up at every call
//! (a credential, an extension's record), and a lookup here is a hash, a clock read and a clone
//! of the value (keep values cheap to clone: `Arc`s), where each `moka` read also kept the
//! cache's books (a queued read, now and then a maintenance round on the caller's thread: about
//! a microsecond a call, issue 41). Bounded: past `max` keys the map starts again, the values
//! read again as they are needed.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// Hashed with foldhash (seeded per process), not SipHash: two of these are read at every
/// extension call.
pub struct ReadCache<V> {
    entries: RwLock<HashMap<String, (Instant, V), foldhash::fast::RandomState>>,
    ttl: Duration,
    max: usize,
}

impl<V: Clone> ReadCache<V> {
    pub fn new(ttl: Duration, max: usize) -> ReadCache<V> {
        ReadCache { entries: RwLock::default(), ttl, max: max.max(1) }
    }

    /// The value of `key` if it was read less than the time to live ago.
    pub fn get(&self, key: &str) -> Option<V> {
        self.get_with_time(key).map(|(_, value)| value)
    }

    /// `get`, with the time the value was read (for a cache built on this one, whose entries
    /// must not outlive it).
    pub fn get_with_time(&self, key: &str) -> Option<(Instant, V)> {
        let entries = self.entries.read().expect("read cache lock");
        entries.get(key).filter(|(read, _)| read.elapsed() < self.ttl).map(|(read, value)| (*read, value.clone()))
    }

    /// Keeps `value`, read from the database at `read` (taken before the read, so that its age
    /// is never understated).
    pub fn insert(&self, key: &str, value: V, read: Instant) {
        let mut entries = self.entries.write().expect("read cache lock");
        if entries.len() >= self.max && !entries.contains_key(key) {
            entries.clear();
        }
        entries.insert(key.to_string(), (read, value));
    }

    /// Forgets `key` (this process wrote it).
    pub fn remove(&self, key: &str) {
        self.entries.write().expect("read cache lock").remove(key);
    }

    pub fn len(&self) -> usize {
        self.entries.read().map_or(0, |entries| entries.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_trusted_for_its_time_to_live_and_the_map_is_bounded() {
        let cache = ReadCache::new(Duration::from_secs(60), 2);
        assert_eq!(cache.get("a"), None);
        cache.insert("a", 1, Instant::now());
        assert_eq!(cache.get("a"), Some(1));
        let long_ago = Instant::now().checked_sub(Duration::from_secs(61)).expect("the clock is past a minute");
        cache.insert("old", 2, long_ago);
        assert_eq!(cache.get("old"), None, "read past its time to live");
        cache.remove("a");
        assert_eq!(cache.get("a"), None);
        cache.insert("b", 3, Instant::now());
        cache.insert("c", 4, Instant::now());
        assert!(cache.len() <= 2, "bounded: {}", cache.len());
        assert_eq!(cache.get("c"), Some(4));
    }
}
