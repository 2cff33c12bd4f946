//! The prepared components of this node by content hash, for the lookup at every call.
//!
//! `Runtime::prepared` (a `moka` cache) loads each component once however many calls ask for it
//! at the same time, and bounds how many are kept; but each of its reads also keeps its books
//! (an entry in a queue of reads, a maintenance round now and then on the reader's thread),
//! which an extension call paid every time (issue 41). This map in front of it answers the calls
//! of components already loaded with a hash and a clone under a read lock. A component's
//! content never changes under its hash, so nothing here is ever stale; the map is bounded like
//! the cache and starts again when full.

use std::collections::HashMap;
use std::sync::RwLock;

use super::Prepared;

/// As many as `Runtime::prepared` keeps.
const MAX_READY: usize = 1000;

#[derive(Default)]
pub(super) struct Ready {
    by_hash: RwLock<HashMap<String, Prepared>>,
}

impl Ready {
    pub fn get(&self, sha256: &str) -> Option<Prepared> {
        self.by_hash.read().expect("ready lock").get(sha256).cloned()
    }

    pub fn keep(&self, sha256: &str, prepared: &Prepared) {
        let mut by_hash = self.by_hash.write().expect("ready lock");
        if by_hash.len() >= MAX_READY && !by_hash.contains_key(sha256) {
            by_hash.clear();
        }
        by_hash.insert(sha256.to_string(), prepared.clone());
    }
}
