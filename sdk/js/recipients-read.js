// Reading the instance's recipients (herald:platform/recipients-read; an open extension's world
// does not offer it). A recipient is named by a unique field and its value.
import { find as witFind, get as witGet, records as witRecords } from "herald:platform/recipients-read@0.1.0";
import { call, record, toValue } from "./values.js";

/** The recipient whose `keyField` is `key`, or null. */
export function get(keyField, key) {
  const found = call(witGet, keyField, toValue(key));
  return found === undefined ? null : record(found);
}

/** Recipients matching an RSQL filter such as `CITY=="Paris";AGE>=18`. */
export function find(filter, limit = 100) {
  return call(witFind, filter, limit).map(record);
}

/** A recipient's One-To-Many records of `table`. */
export function records(keyField, key, table, filter = "", limit = 100) {
  return call(witRecords, keyField, toValue(key), table, filter, limit).map(record);
}
