//! The demo instances of the embedded default (shared/spec/demo-instance.md): created on the
//! first start on an empty store (data directory or database), left as they are afterwards.

use crate::auth::secret;
use crate::model::{DefinitionFile, DEMO};
use crate::store::tenant::MediaChange;
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
pub async fn ensure(control: &ControlDb) -> anyhow::Result<bool> {
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
    control.setting_or_insert(CREATED_FLAG, "true").await?;
    Ok(true)
}

/// The demo's template `welcome.html` in each demo instance's store, as a working copy and
/// committed (flow runs on any node render the committed one: `flows::send`), the first time
/// (every node runs this at start; the committed version, which nothing deletes, says it was done).
pub async fn share_welcome(tenants: &super::Tenants) -> anyhow::Result<()> {
    let file = DefinitionFile::from_toml(DEMO).map_err(anyhow::Error::msg)?;
    let put = |path: &str| MediaChange::Put {
        path: path.into(),
        content: WELCOME_TEMPLATE.as_bytes().to_vec(),
        digest: super::media::sha256_hex(WELCOME_TEMPLATE.as_bytes()),
    };
    for settings in &file.instances {
        if let Ok(tenant) = tenants.activate(&settings.customer_id).await {
            if tenant.db.media_file("committed/templates/welcome.html").await?.is_some() {
                continue;
            }
            let welcome = vec![put("media/templates/welcome.html"), put("committed/templates/welcome.html")];
            tenant.db.apply_media_changes(welcome, false, true).await?;
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
