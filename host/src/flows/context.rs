//! Contextual data of a triggering call (the spec's rules): `POST .../events/{eventId}/:achieveEvent`
//! may carry `{"name": <Context Parameter Schema>, "data": {...}}`. It is checked against the
//! published schema before anything happens, and against the flows the call triggers: a flow that
//! declares a `contextSchema` needs data of that schema. It is never written to the recipient's
//! data; it is for the executions of the flows this call triggers directly.

use serde_json::Value as Json;

use crate::assets::contexts;
use crate::assets::{Kind, MediaArea, RelPath};
use crate::model::flow::Flow;

/// Contextual data that passed its schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub schema: String,
    pub data: Json,
}

/// Reads and checks the optional body of a triggering call; the error says what is wrong.
pub async fn read(body: Option<Json>, media: &MediaArea) -> Result<Option<Context>, String> {
    let Some(body) = body else { return Ok(None) };
    let object = body.as_object().ok_or("the body must be a JSON object {\"name\": <schema>, \"data\": {...}}")?;
    if let Some(other) = object.keys().find(|k| !matches!(k.as_str(), "name" | "data")) {
        return Err(format!("unknown member '{other}' (contextual data is {{\"name\": <schema>, \"data\": {{...}}}})"));
    }
    let name = object.get("name").and_then(Json::as_str).ok_or("the body needs 'name', the Context Parameter Schema of its data")?;
    let data = object.get("data").cloned().ok_or("the body needs 'data', the contextual data")?;
    let path = RelPath::parse("schema", &format!("{name}.json")).map_err(|_| format!("unknown Context Parameter Schema '{name}'"))?;
    let bytes = match tokio::fs::read(media.path(Kind::Contexts, &path)).await {
        Ok(bytes) => bytes,
        Err(_) => return Err(format!("unknown Context Parameter Schema '{name}'")),
    };
    let schema = contexts::parse(&bytes).map_err(|e| format!("the Context Parameter Schema '{name}' is not valid: {e}"))?;
    contexts::validate(&schema, &data).map_err(|problems| format!("the contextual data does not fit schema '{name}': {}", problems.join("; ")))?;
    Ok(Some(Context { schema: name.to_string(), data }))
}

/// Whether `context` satisfies every flow in `triggered` that declares a schema.
pub fn fits(triggered: &[&Flow], context: Option<&Context>) -> Result<(), String> {
    for flow in triggered {
        if let Some(wanted) = &flow.context_schema {
            match context {
                Some(c) if &c.schema == wanted => {}
                Some(c) => return Err(format!("flow {} needs contextual data of schema '{wanted}', not '{}'", flow.name, c.schema)),
                None => return Err(format!("flow {} needs contextual data of schema '{wanted}' ({{\"name\": \"{wanted}\", \"data\": {{...}}}})", flow.name)),
            }
        }
    }
    Ok(())
}
