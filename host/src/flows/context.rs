//! Contextual data of a triggering call (the spec's rules): `POST .../events/{eventId}/:achieveEvent`
//! may carry `{"name": <Context Parameter Schema>, "data": {...}}`. It is checked against the
//! published schema before anything happens, and against the flows the call triggers: a flow that
//! declares a `contextSchema` needs data of that schema. It is never written to the recipient's
//! data; it is for the executions of the flows this call triggers directly.

use serde_json::Value as Json;

use crate::assets::contexts;
use crate::assets::{Kind, MediaArea, RelPath};
use crate::model::flow::Flow;
use crate::store::tenant::SharedArea;
use crate::tenants::Tenant;

/// Contextual data that passed its schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub schema: String,
    pub data: Json,
}

/// The published Context Parameter Schema `name` (its JSON): from the instance's store, which
/// every node reads, else from this node's media area (schemas published before the store kept
/// them). `None` when there is none, or the store cannot be read (logged).
pub async fn schema_bytes(tenant: &Tenant, media: &MediaArea, name: &str) -> Option<Vec<u8>> {
    let path = RelPath::parse("schema", &format!("{name}.json")).ok()?;
    match tenant.db.shared_file(SharedArea::Contexts, &path.as_text()).await {
        Ok(Some(bytes)) => return Some(bytes),
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "a Context Parameter Schema could not be read from the store"),
    }
    tokio::fs::read(media.path(Kind::Contexts, &path)).await.ok()
}

/// Reads and checks the optional body of a triggering call; the error says what is wrong.
pub async fn read(body: Option<Json>, tenant: &Tenant, media: &MediaArea) -> Result<Option<Context>, String> {
    let Some(body) = body else { return Ok(None) };
    let object = body.as_object().ok_or("the body must be a JSON object {\"name\": <schema>, \"data\": {...}}")?;
    if let Some(other) = object.keys().find(|k| !matches!(k.as_str(), "name" | "data")) {
        return Err(format!("unknown member '{other}' (contextual data is {{\"name\": <schema>, \"data\": {{...}}}})"));
    }
    let name = object.get("name").and_then(Json::as_str).ok_or("the body needs 'name', the Context Parameter Schema of its data")?;
    let data = object.get("data").cloned().ok_or("the body needs 'data', the contextual data")?;
    let bytes = schema_bytes(tenant, media, name).await.ok_or_else(|| format!("unknown Context Parameter Schema '{name}'"))?;
    let schema = contexts::parse(&bytes).map_err(|e| format!("the Context Parameter Schema '{name}' is not valid: {e}"))?;
    contexts::validate(&schema, &data)
        .map_err(|problems| format!("the contextual data does not fit schema '{name}': {}", problems.join("; ")))?;
    Ok(Some(Context { schema: name.to_string(), data }))
}

/// Whether `context` satisfies every flow in `triggered` that declares a schema.
pub fn fits(triggered: &[&Flow], context: Option<&Context>) -> Result<(), String> {
    for flow in triggered {
        if let Some(wanted) = &flow.context_schema {
            match context {
                Some(c) if &c.schema == wanted => {}
                Some(c) => return Err(format!("flow {} needs contextual data of schema '{wanted}', not '{}'", flow.name, c.schema)),
                None => {
                    return Err(format!(
                        "flow {} needs contextual data of schema '{wanted}' ({{\"name\": \"{wanted}\", \"data\": {{...}}}})",
                        flow.name
                    ))
                }
            }
        }
    }
    Ok(())
}
