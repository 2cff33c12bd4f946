//! The http extension a call names, found in one lookup: keyed by the instance and the extension's
//! id as the call's path writes it (still encoded), each entry holds the decoded id and the
//! prepared component. Without it every call decoded its id, made the record's path
//! (`{id}.wasm`) and checked it, looked the record up by that path and the component by its
//! content hash: two maps under locks and three strings a call (`bench/instructions.sh`).
//!
//! An entry lives no longer than the record it came from (`RECORD_TTL` from when the record was
//! read: a write made by another node shows as late as it would without this cache) and only
//! while the instance's records have seen no write since (`RecordsStamp`): an upload, a new
//! version or a removal here is seen at the next call. Only an id's plain spelling is kept
//! (`is_plain_spelling`): at most one entry per extension of each instance.

use std::sync::RwLock;
use std::time::Instant;

use hashbrown::{Equivalent, HashMap};

use super::Prepared;
use crate::store::tenant::{RecordsStamp, RECORD_TTL};
use crate::tenants::Tenant;

/// The most entries kept; past it the map starts again (as `ReadCache` does).
const MAX_ENTRIES: usize = 10_000;

#[derive(Hash, PartialEq, Eq)]
struct Key {
    customer: String,
    /// The id as the path writes it (`shop%252Fhook`).
    raw_id: String,
}

#[derive(Hash)]
struct KeyRef<'a> {
    customer: &'a str,
    raw_id: &'a str,
}

impl Equivalent<Key> for KeyRef<'_> {
    fn equivalent(&self, key: &Key) -> bool {
        self.customer == key.customer && self.raw_id == key.raw_id
    }
}

struct Target {
    /// When the record it came from was read.
    read: Instant,
    stamp: RecordsStamp,
    id: String,
    extension: Prepared,
}

/// The http extensions that calls named, by instance and path segment.
#[derive(Default)]
pub struct CallTargets {
    entries: RwLock<HashMap<Key, Target, foldhash::fast::RandomState>>,
}

/// Whether `raw_id` is the one way a path writes `id` once decoded: its folders' `/` as `%2F`
/// and nothing else encoded. Only that spelling is kept, so that no caller can fill the map with
/// other spellings of one id (`hell%6F`, `shop%2fhook`); those are served the long way.
pub fn is_plain_spelling(raw_id: &str, id: &str) -> bool {
    raw_id.split("%2F").eq(id.split('/'))
}

impl CallTargets {
    /// The decoded id and the prepared component of the http extension that `raw_id` named on an
    /// earlier call of `tenant`, while still good.
    pub fn get(&self, tenant: &Tenant, raw_id: &str) -> Option<(String, Prepared)> {
        let entries = self.entries.read().expect("call targets lock");
        let target = entries.get(&KeyRef { customer: tenant.customer_id(), raw_id })?;
        let good = target.read.elapsed() < RECORD_TTL && target.stamp == tenant.db.extension_records_stamp();
        good.then(|| (target.id.clone(), target.extension.clone()))
    }

    /// Keeps what `raw_id` names for `tenant`: `stamp` taken before the record was read, `read`
    /// when it was.
    pub fn insert(&self, tenant: &Tenant, raw_id: &str, stamp: RecordsStamp, read: Instant, id: &str, extension: &Prepared) {
        let target = Target { read, stamp, id: id.to_string(), extension: extension.clone() };
        let mut entries = self.entries.write().expect("call targets lock");
        let key = KeyRef { customer: tenant.customer_id(), raw_id };
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(&key) {
            entries.clear();
        }
        match entries.get_mut(&key) {
            Some(kept) => *kept = target,
            None => {
                entries.insert(Key { customer: key.customer.to_string(), raw_id: raw_id.to_string() }, target);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_plain_spelling;

    #[test]
    fn only_the_plain_spelling_of_an_id_is_kept() {
        assert!(is_plain_spelling("hello", "hello"));
        assert!(is_plain_spelling("shop%2Fhook", "shop/hook"));
        assert!(is_plain_spelling("a%2Fb%2Fc", "a/b/c"));
        for (raw, id) in [("hell%6F", "hello"), ("shop%2fhook", "shop/hook"), ("shop%252Fhook", "shop%2Fhook"), ("a%2F", "a")] {
            assert!(!is_plain_spelling(raw, id), "{raw} for {id}");
        }
    }
}
