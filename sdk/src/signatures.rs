//! Checking that a call comes from the system that says it sent it (http extensions only): Herald
//! computes an HMAC-SHA256 keyed by one of the instance's secrets (`PUT
//! /extensions/secrets/{name}`), which the extension names and never reads. At most 8 checks a
//! call (more is `Error::LimitExceeded`); `Error::NotFound` when the secret is not set.
//!
//! ```no_run
//! use herald_sdk::http::{Handler, Request, Response};
//! use herald_sdk::signatures;
//!
//! struct Hook;
//!
//! impl Handler for Hook {
//!     fn handle(request: Request) -> Response {
//!         match signatures::verify_standard_webhook("SHOP_SIGNING_SECRET", &request, 300) {
//!             Ok(true) => Response::json(200, &serde_json::json!({"ok": true})),
//!             Ok(false) => Response::json(401, &serde_json::json!({"message": "the signature does not match"})),
//!             Err(e) => Response::json(500, &serde_json::json!({"message": e.to_string()})),
//!         }
//!     }
//! }
//! ```

use crate::bindings::signing::herald::platform::signatures as wit;
use crate::http::Request;
use crate::Error;

/// Whether `request` is signed by the Standard Webhooks scheme (headers `webhook-id`,
/// `webhook-timestamp`, `webhook-signature`) with secret `secret` (`whsec_` and the base64 of
/// the key, as the scheme gives it, or the key itself), sent within `tolerance_seconds` of now
/// (0: 300). A request without those headers is not signed: `Ok(false)`.
pub fn verify_standard_webhook(secret: &str, request: &Request, tolerance_seconds: u32) -> Result<bool, Error> {
    let header = |name: &str| request.header(name).unwrap_or_default();
    wit::verify_standard_webhook(
        secret,
        &header("webhook-id"),
        &header("webhook-timestamp"),
        &header("webhook-signature"),
        &request.body,
        tolerance_seconds,
    )
}

/// Whether `signature` (hex or base64; a leading `sha256=` is skipped) is the HMAC-SHA256 of
/// `message` keyed by secret `secret`, as GitHub (`X-Hub-Signature-256`) and Shopify
/// (`X-Shopify-Hmac-Sha256`) sign the body.
pub fn verify_hmac_sha256(secret: &str, message: &[u8], signature: &str) -> Result<bool, Error> {
    wit::verify_hmac_sha256(secret, message, signature)
}
