//! An authheader extension (written with herald-sdk) for an API behind OAuth2: it fetches an
//! access token with the client-credentials grant from the token endpoint, and Herald adds
//! `Authorization: Bearer <token>` to every call to the API's host until the token expires, then
//! asks again. The token endpoint, client id and client secret are the instance's secrets
//! `OAUTH_TOKEN_URL`, `OAUTH_CLIENT_ID` and `OAUTH_CLIENT_SECRET`. Its own call to the token
//! endpoint gets no authheader (Herald never adds headers to an authheader's calls).

use herald_sdk::extensions::{AuthHeader, Grant};
use herald_sdk::{client, log, secrets};

// The API's host (localhost in the test suite); the token endpoint's (127.0.0.1 in the tests).
herald_sdk::config!(bound_hosts: ["localhost"], allowed_hosts: ["127.0.0.1"], timeout_ms: 5000);

struct OAuth;

fn secret(name: &str) -> Result<String, String> {
    secrets::get(name).map_err(|e| e.to_string())?.ok_or_else(|| format!("the secret {name} is not set"))
}

impl AuthHeader for OAuth {
    fn headers(host: &str, _method: &str, _path_with_query: &str) -> Result<Grant, String> {
        let form = format!(
            "grant_type=client_credentials&client_id={}&client_secret={}",
            secret("OAUTH_CLIENT_ID")?,
            secret("OAUTH_CLIENT_SECRET")?
        );
        let answer = client::post(&secret("OAUTH_TOKEN_URL")?, "application/x-www-form-urlencoded", form.as_bytes())?;
        if answer.status != 200 {
            return Err(format!("the token endpoint answered {}", answer.status));
        }
        let token: serde_json::Value = answer.json()?;
        let access = token["access_token"].as_str().ok_or("the token endpoint gave no access_token")?;
        let expires_in = token["expires_in"].as_u64().unwrap_or(60).min(u64::from(u32::MAX)) as u32;
        log::info(&format!("a token for {host}, good for {expires_in} s"));
        Ok(Grant::bearer(access, expires_in))
    }
}

herald_sdk::authheader_extension!(OAuth);
