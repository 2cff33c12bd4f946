// The instance's Global Data, as text like the REST API's VALUE (herald:platform/global-data).
import { get as witGet, set as witSet } from "herald:platform/global-data@0.1.0";
import { call } from "./values.js";

export function get(name) {
  return call(witGet, name) ?? null;
}

export function set(name, value) {
  call(witSet, name, String(value));
}
