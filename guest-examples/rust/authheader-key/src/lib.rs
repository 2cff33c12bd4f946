//! An authheader extension: calls to api.example.com carry an API key kept in Global Data.

wit_bindgen::generate!({ path: "../../../wit", world: "herald:platform/authheader-extension", generate_all });

use exports::herald::platform::authheader::{Guest, Header};
use herald::platform::global_data;

struct ApiKey;

impl Guest for ApiKey {
    fn headers(host: String, _method: String, _path_with_query: String) -> Result<Vec<Header>, String> {
        if host != "api.example.com" {
            return Ok(Vec::new());
        }
        let key = global_data::get("SUPPORT_EMAIL").map_err(|e| format!("{e:?}"))?.unwrap_or_default();
        Ok(vec![Header { name: "x-api-key".into(), value: key }])
    }
}

export!(ApiKey);
