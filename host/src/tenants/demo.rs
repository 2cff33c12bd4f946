//! The demo instances of the embedded default (shared/spec/demo-instance.md): created on the
//! first start on an empty store (data directory or database), left as they are afterwards.

use std::path::Path;

use crate::assets::{Kind, MediaArea, RelPath};
use crate::auth::secret;
use crate::model::{DefinitionFile, DEMO};
use crate::store::ControlDb;

/// (instance, client_id, client_secret, scope): published demo credentials, never created
/// outside demo mode.
pub const DEMO_CREDENTIALS: [(&str, &str, &str, &str); 3] = [
    ("demo", "demo-public-key", "demo-public-secret", "public"),
    ("demo", "demo-app-key", "demo-app-secret", "app"),
    ("demo-staging", "demo-staging-public-key", "demo-staging-public-secret", "public"),
];

const CREATED_FLAG: &str = "demo_created";

/// The committed template `welcome` of the demo instances, which their flow WELCOME_MAIL sends.
/// Its placeholders are Jinja's: the recipient's Person Data, Global Data and the contextual data.
/// Each value it prints is tested first: a recipient without a FIRST_NAME, or CAMPAIGN_NAME
/// cleared through the API, still gets the mail (printing a missing value fails the send).
const WELCOME_TEMPLATE: &str = "<html><body>\n<h1>Welcome{% if recipient.FIRST_NAME %}, {{ recipient.FIRST_NAME }}{% endif %}!</h1>\n\
    {% if global.CAMPAIGN_NAME %}<p>{{ global.CAMPAIGN_NAME }} is on: see you soon.</p>\n{% endif %}</body></html>\n";

/// Creates the demo instances and credentials unless they were created before. Returns whether
/// demo mode is on (the demo was created now or earlier).
pub async fn ensure(control: &ControlDb, data_dir: &Path) -> anyhow::Result<bool> {
    if control.setting(CREATED_FLAG).await?.is_some() {
        return Ok(true);
    }
    if !control.instances().await?.is_empty() {
        // An operator's own server: no demo.
        return Ok(false);
    }
    let file = DefinitionFile::from_toml(DEMO).map_err(anyhow::Error::msg)?;
    super::apply(control, &file).await?;
    for (instance, id, secret, scope) in DEMO_CREDENTIALS {
        if control.credential(id).await?.is_none() {
            let inserted = control.insert_credential(id, instance, &secret::hash(secret), scope, "demo credential").await;
            // Another node starting on the same empty database may have inserted it meanwhile.
            if inserted.is_err() && control.credential(id).await?.is_none() {
                inserted?;
            }
        }
    }
    for settings in &file.instances {
        write_welcome(&MediaArea::new(data_dir, &settings.customer_id)).await?;
    }
    control.setting_or_insert(CREATED_FLAG, "true").await?;
    Ok(true)
}

/// The template `welcome.html`, as a working copy and committed.
async fn write_welcome(media: &MediaArea) -> anyhow::Result<()> {
    let path = RelPath::parse("template", "welcome.html").map_err(anyhow::Error::msg)?;
    for target in [media.path(Kind::Templates, &path), media.committed_template(&path)] {
        let temp = media.temp_path().await?;
        tokio::fs::write(temp.path(), WELCOME_TEMPLATE).await?;
        temp.replace(&target).await?;
    }
    Ok(())
}

/// The demo's committed template in each demo instance's store, where flow runs on any node
/// read it (`flows::send`); one committed since is left as it is.
pub async fn share_welcome(tenants: &super::Tenants) -> anyhow::Result<()> {
    let file = DefinitionFile::from_toml(DEMO).map_err(anyhow::Error::msg)?;
    for settings in &file.instances {
        if let Ok(tenant) = tenants.activate(&settings.customer_id).await {
            tenant
                .db
                .insert_shared_file(crate::store::tenant::SharedArea::CommittedTemplates, "welcome.html", WELCOME_TEMPLATE.as_bytes())
                .await?;
        }
    }
    Ok(())
}

/// The start-up banner of demo mode (printed to stdout, not to the log).
pub fn banner(base_url: &str) -> String {
    let mut out = format!("Herald demo mode: {base_url}\n  instance      client_id                   client_secret               scope\n");
    for (instance, id, secret, scope) in DEMO_CREDENTIALS {
        out.push_str(&format!("  {instance:<13} {id:<27} {secret:<27} {scope}\n"));
    }
    out
}
