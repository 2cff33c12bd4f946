// Writing the instance's recipients (herald:platform/recipients-write).
import {
  achieveEvent as witAchieveEvent,
  create as witCreate,
  delete as witDelete,
  deleteRecords as witDeleteRecords,
  update as witUpdate,
  upsert as witUpsert,
  upsertRecords as witUpsertRecords,
} from "herald:platform/recipients-write@0.1.0";
import { call, fields, record, toValue } from "./values.js";

export function create(personData) {
  return record(call(witCreate, fields(personData)));
}

export function update(keyField, key, personData) {
  return record(call(witUpdate, keyField, toValue(key), fields(personData)));
}

/** Creates or updates the recipient its Recipient Id, or else a unique field, names. */
export function upsert(personData) {
  return record(call(witUpsert, fields(personData)));
}

export function remove(keyField, key) {
  return call(witDelete, keyField, toValue(key));
}

/** Creates or replaces One-To-Many records (objects with the table's identifier). */
export function upsertRecords(keyField, key, table, rows) {
  return call(witUpsertRecords, keyField, toValue(key), table, rows.map(fields));
}

export function deleteRecords(keyField, key, table, ids) {
  return call(witDeleteRecords, keyField, toValue(key), table, ids.map(toValue));
}

export function achieveEvent(keyField, key, event) {
  call(witAchieveEvent, keyField, toValue(key), event);
}
