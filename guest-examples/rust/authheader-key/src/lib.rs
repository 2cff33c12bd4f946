//! An authheader extension (written with herald-sdk): every call that the instance's extensions
//! make to its CRM carries `Authorization: Bearer <token>`, the token being the instance's secret
//! `CRM_TOKEN` (`PUT /extensions/secrets/CRM_TOKEN`). The calling extensions never hold it.

use herald_sdk::extensions::{AuthHeader, Grant};
use herald_sdk::secrets;

// The CRM's hosts (127.0.0.1: the test suite's stand-in).
herald_sdk::config!(bound_hosts: ["api.example.com", "127.0.0.1"]);

struct CrmToken;

impl AuthHeader for CrmToken {
    fn headers(_host: &str, _method: &str, _path_with_query: &str) -> Result<Grant, String> {
        let token = secrets::get("CRM_TOKEN").map_err(|e| e.to_string())?.ok_or("the secret CRM_TOKEN is not set")?;
        // Reused for a minute: a changed secret reaches calls within that time (at once on the
        // node where it was set).
        Ok(Grant::bearer(&token, 60))
    }
}

herald_sdk::authheader_extension!(CrmToken);
