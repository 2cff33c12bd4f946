//! Instances (tenants): the registry a server resolves customer ids in, the application of
//! definition files, and the demo instances of the embedded default.
//!
//! A server knows every instance (its id and revision: under 2 KiB each, measured) but opens an
//! instance's store only while it works: `registry.rs` activates an instance on its first call,
//! flow run, schedule or monitor, and puts it to sleep when idle or when too many are open.

mod apply;
pub mod demo;
mod media;
mod registry;

use std::time::Duration;

pub use apply::{apply, Applied};
pub use media::{InstanceMedia, MediaError, MediaResult, Writing};
pub use registry::{Activation, Lookout, Tenants, TenantsStats};

use crate::model::{InstanceSettings, Model};
use crate::store::TenantDb;

/// One open instance as a server sees it: its settings, its validated model and its store.
#[derive(Debug)]
pub struct Tenant {
    pub settings: InstanceSettings,
    pub model: Model,
    pub db: TenantDb,
    pub revision: i64,
    /// This node's counts of the instance's calls, for its admission (`http::guard`).
    pub counts: crate::limits::InstanceCounts,
    /// This node's copy of the instance's media area (`media.rs`).
    media_copy: media::MediaCopy,
    /// Set by the registry's lookups, read and cleared by its sweeps (`registry.rs`): a call
    /// marks its instance used without a clock read or a write to a line every call shares.
    used_lately: std::sync::atomic::AtomicBool,
}

impl Tenant {
    pub fn new(settings: InstanceSettings, model: Model, db: TenantDb, revision: i64) -> Tenant {
        Tenant {
            settings,
            model,
            db,
            revision,
            counts: Default::default(),
            media_copy: media::MediaCopy::default(),
            used_lately: Default::default(),
        }
    }

    pub fn customer_id(&self) -> &str {
        &self.settings.customer_id
    }
}

/// How many instances a node keeps open, and for how long (`--max-open-instances`,
/// `--instance-idle-timeout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenInstances {
    /// Instances open at once; past it the least recently used one that nothing is using is put
    /// to sleep. Instances in use are never closed under their users, so while more than this
    /// many are busy at the same moment, the node holds that many.
    pub max_open: usize,
    /// An open instance unused for this long is put to sleep.
    pub idle_after: Duration,
}

/// On SQLite an open instance holds at most 4 connections (a thread and two descriptors each):
/// 12 open instances stay within 48 threads and about 110 descriptors, well inside a default
/// `ulimit -n` of 1024 whatever the number of instances.
pub const DEFAULT_MAX_OPEN: usize = 12;

impl Default for OpenInstances {
    fn default() -> Self {
        OpenInstances { max_open: DEFAULT_MAX_OPEN, idle_after: Duration::from_secs(60) }
    }
}
