//! `herald instance apply FILE`: creates the instances a definition file names, or evolves them
//! to its model. Everything is checked before anything is written: an invalid model or a change
//! that would lose data is refused as a whole, with every reason.

use anyhow::{bail, Context};

use crate::model::evolve::{self, Change};
use crate::model::{validate_settings, DefinitionFile, Model};
use crate::store::{ControlDb, StoreError};

/// What applying did to one instance.
#[derive(Debug)]
pub struct Applied {
    pub customer_id: String,
    pub created: bool,
    pub changes: Vec<Change>,
}

pub async fn apply(control: &ControlDb, file: &DefinitionFile) -> anyhow::Result<Vec<Applied>> {
    if file.instances.is_empty() {
        bail!("the definition names no [[instance]]");
    }
    let mut problems = Vec::new();
    for s in &file.instances {
        if let Err(e) = validate_settings(s) {
            problems.push(e);
        }
    }
    let model = match Model::new(file.model.clone()) {
        Ok(m) => Some(m),
        Err(e) => {
            problems.push(e);
            None
        }
    };
    let mut plans = Vec::new();
    if let Some(model) = &model {
        for s in &file.instances {
            match control.instance(&s.customer_id).await? {
                None => plans.push((s, true, Vec::new())),
                Some(existing) => match evolve::plan(&existing.model, &model.def) {
                    Ok(changes) => plans.push((s, false, changes)),
                    Err(refusal) => problems.push(format!("instance {}: {refusal}", s.customer_id)),
                },
            }
        }
    }
    if !problems.is_empty() {
        bail!("{}", problems.join("\n"));
    }
    let model = model.expect("no problems, so the model is valid");
    let mut applied = Vec::new();
    for (settings, created, changes) in plans {
        let db = control.create_tenant(&settings.customer_id).await?;
        db.ensure_schema(&model).await.map_err(|e| match e {
            StoreError::Invalid(m) => anyhow::anyhow!("instance {}: {m}", settings.customer_id),
            e => anyhow::Error::new(e).context(format!("instance {}: updating its tables", settings.customer_id)),
        })?;
        control
            .put_instance(settings, &model.def)
            .await
            .with_context(|| format!("instance {}: saving its definition", settings.customer_id))?;
        applied.push(Applied { customer_id: settings.customer_id.clone(), created, changes });
    }
    Ok(applied)
}
