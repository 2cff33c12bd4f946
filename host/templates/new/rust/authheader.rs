//! {{name}}: an authheader extension. Every call that the instance's extensions make to
//! api.example.com carries `Authorization: Bearer <token>`, the token being the instance's secret
//! API_TOKEN (`PUT /extensions/secrets/API_TOKEN`); the calling extensions never hold it.

use herald_sdk::extensions::{AuthHeader, Grant};
use herald_sdk::secrets;

herald_sdk::config!(bound_hosts: ["api.example.com"]);

struct Extension;

impl AuthHeader for Extension {
    fn headers(_host: &str, _method: &str, _path_with_query: &str) -> Result<Grant, String> {
        let token = secrets::get("API_TOKEN").map_err(|e| e.to_string())?.ok_or("the secret API_TOKEN is not set")?;
        // Reused for a minute: a changed secret reaches calls within that time.
        Ok(Grant::bearer(&token, 60))
    }
}

herald_sdk::authheader_extension!(Extension);
