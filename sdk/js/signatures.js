// Checking that a call comes from the system that says it sent it (herald:platform/signatures;
// http extensions only): Herald computes an HMAC-SHA256 keyed by one of the instance's secrets,
// which the extension names and never reads. At most 8 checks a call.
import { verifyHmacSha256 as witHmac, verifyStandardWebhook as witStandard } from "herald:platform/signatures@0.1.0";
import { call } from "./values.js";

function bytes(data) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (typeof data === "string") return new TextEncoder().encode(data);
  throw new TypeError("the signed data is a Uint8Array, an ArrayBuffer or a string");
}

function header(headers, name) {
  const value = typeof headers.get === "function" ? headers.get(name) : headers[name];
  return value ?? "";
}

/**
 * Whether a call is signed by the Standard Webhooks scheme (headers webhook-id, webhook-timestamp,
 * webhook-signature) with secret `secret`, sent within `toleranceSeconds` of now. `headers` is the
 * request's Headers (or an object), `body` the bytes read from it (`await request.arrayBuffer()`).
 */
export function verifyStandardWebhook(secret, headers, body, toleranceSeconds = 300) {
  return call(
    witStandard,
    secret,
    header(headers, "webhook-id"),
    header(headers, "webhook-timestamp"),
    header(headers, "webhook-signature"),
    bytes(body),
    toleranceSeconds,
  );
}

/** Whether `signature` (hex or base64, `sha256=` skipped) is the HMAC-SHA256 of `message` keyed by secret `secret`. */
export function verifyHmacSha256(secret, message, signature) {
  return call(witHmac, secret, bytes(message), signature ?? "");
}
