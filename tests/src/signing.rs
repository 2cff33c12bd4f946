//! Calls signed as a webhook's sender signs them (the Standard Webhooks scheme), computed here
//! independently of Herald, for the tests of `herald:platform/signatures` and of the examples
//! that check signatures (the JavaScript and Python shop webhooks).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};

/// The key the examples' shop signs with; the instance keeps it as secret `SHOP_SIGNING_SECRET`.
pub const SHOP_KEY: &[u8] = b"the shop's key for signing calls";

/// The secret's value for `key` as the scheme gives it: `whsec_` and the key in base64.
pub fn whsec(key: &[u8]) -> String {
    format!("whsec_{}", BASE64.encode(key))
}

/// The headers of `body` signed with `key` `age_seconds` ago: `webhook-id`, `webhook-timestamp`
/// and `webhook-signature` (`v1,` and the base64 of HMAC-SHA256(key, "{id}.{timestamp}.{body}")).
pub fn standard_webhook_headers(key: &[u8], body: &[u8], age_seconds: u64) -> [(&'static str, String); 3] {
    let timestamp = (SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() - age_seconds).to_string();
    let id = format!("msg_{timestamp}");
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    let signature = format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()));
    [("webhook-id", id), ("webhook-timestamp", timestamp), ("webhook-signature", signature)]
}

/// `request` with `body` (JSON) signed with `key`, `age_seconds` ago.
pub fn signed(request: reqwest::RequestBuilder, key: &[u8], body: &[u8], age_seconds: u64) -> reqwest::RequestBuilder {
    let mut request = request.header("content-type", "application/json").body(body.to_vec());
    for (name, value) in standard_webhook_headers(key, body, age_seconds) {
        request = request.header(name, value);
    }
    request
}
