//! Instances (tenants): the registry a server resolves customer ids in, the application of
//! definition files, and the demo instances of the embedded default.

mod apply;
pub mod demo;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

pub use apply::{apply, Applied};

use crate::model::{InstanceSettings, Model};
use crate::store::control::InstanceRecord;
use crate::store::{ControlDb, TenantDb};

/// One instance as a server sees it: its settings, its validated model and its store.
#[derive(Debug)]
pub struct Tenant {
    pub settings: InstanceSettings,
    pub model: Model,
    pub db: TenantDb,
    pub revision: i64,
}

impl Tenant {
    pub fn customer_id(&self) -> &str {
        &self.settings.customer_id
    }
}

/// The instances of this server, reloaded when the control plane says they changed.
pub struct Tenants {
    control: ControlDb,
    map: RwLock<HashMap<String, Arc<Tenant>>>,
}

impl Tenants {
    pub async fn load(control: ControlDb) -> anyhow::Result<Arc<Tenants>> {
        let tenants = Arc::new(Tenants { control, map: RwLock::new(HashMap::new()) });
        tenants.refresh().await?;
        Ok(tenants)
    }

    pub fn get(&self, customer_id: &str) -> Option<Arc<Tenant>> {
        self.map.read().expect("tenant map lock").get(customer_id).cloned()
    }

    pub fn customer_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.map.read().expect("tenant map lock").keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Loads instances that are new or whose revision changed. Stores are reused across model
    /// changes; an instance whose stored model no longer validates is kept as it was, and logged.
    pub async fn refresh(&self) -> anyhow::Result<()> {
        let revisions = self.control.revisions().await?;
        for (id, revision) in revisions {
            let current = self.get(&id);
            if current.as_ref().is_some_and(|t| t.revision == revision) {
                continue;
            }
            let Some(record) = self.control.instance(&id).await? else { continue };
            match self.build(record, current.as_deref()).await {
                Ok(tenant) => {
                    tracing::info!(customer_id = %id, revision = tenant.revision, "instance loaded");
                    self.map.write().expect("tenant map lock").insert(id, Arc::new(tenant));
                }
                Err(e) => tracing::error!(customer_id = %id, error = %e, "instance could not be loaded"),
            }
        }
        Ok(())
    }

    async fn build(&self, record: InstanceRecord, current: Option<&Tenant>) -> anyhow::Result<Tenant> {
        let model = Model::new(record.model).map_err(anyhow::Error::msg)?;
        let db = match current {
            Some(t) => t.db.clone(),
            None => self.control.open_tenant(&record.settings.customer_id).await?,
        };
        Ok(Tenant { settings: record.settings, model, db, revision: record.revision })
    }

    /// Polls the control plane for changed instances until `shutdown` resolves.
    pub fn spawn_refresher(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let tenants = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if let Err(e) = tenants.refresh().await {
                    tracing::warn!(error = %e, "instance refresh failed");
                }
            }
        })
    }
}
