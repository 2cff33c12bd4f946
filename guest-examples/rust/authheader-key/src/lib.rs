//! An authheader extension (written with herald-sdk): calls to api.example.com carry an API key
//! kept in Global Data.

use herald_sdk::extensions::AuthHeader;
use herald_sdk::global_data;

struct ApiKey;

impl AuthHeader for ApiKey {
    fn headers(host: &str, _method: &str, _path_with_query: &str) -> Result<Vec<(String, String)>, String> {
        if host != "api.example.com" {
            return Ok(Vec::new());
        }
        let key = global_data::get("SUPPORT_EMAIL").map_err(|e| e.to_string())?.unwrap_or_default();
        Ok(vec![("x-api-key".into(), key)])
    }
}

herald_sdk::authheader_extension!(ApiKey);
