// The instance's Global Data Tables (herald:platform/tables).
import { delete as witDelete, find as witFind, get as witGet, upsert as witUpsert } from "herald:platform/tables@0.1.0";
import { call, fields, record, toValue } from "./values.js";

export function get(table, id) {
  const found = call(witGet, table, toValue(id));
  return found === undefined ? null : record(found);
}

export function find(table, filter = "", limit = 100) {
  return call(witFind, table, filter, limit).map(record);
}

export function upsert(table, values) {
  call(witUpsert, table, fields(values));
}

export function remove(table, id) {
  return call(witDelete, table, toValue(id));
}
