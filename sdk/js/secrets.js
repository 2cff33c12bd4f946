// The instance's secrets (herald:platform/secrets): only an authheader extension's world offers
// them, so only an authheader extension imports this module.
import { get as witGet } from "herald:platform/secrets@0.1.0";
import { call } from "./values.js";

/** The value of secret `name`, or null when it is not set. */
export function get(name) {
  return call(witGet, name) ?? null;
}
