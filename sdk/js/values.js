// Records as plain objects of plain values, exactly as the REST API writes them: text as strings,
// NUMBER as numbers, BOOLEAN as booleans, DATE (YYYY-MM-DD) and TIMESTAMP (ISO 8601) as strings,
// nothing as null. This module imports nothing from the platform, so any world can use it.

/** A platform call that the instance's data model or its limits refused. */
export class HeraldError extends Error {
  constructor(kind, message = "") {
    super(message ? `${kind}: ${message}` : kind);
    this.kind = kind; // not-found, invalid, conflict, forbidden, limit-exceeded
    this.detail = message;
  }
}

/** A JavaScript value as the platform's value. */
export function toValue(value) {
  if (value === null || value === undefined) return { tag: "null" };
  switch (typeof value) {
    case "boolean":
      return { tag: "boolean", val: value };
    case "number":
      return { tag: "number", val: value };
    case "string":
      return { tag: "text", val: value };
    default:
      throw new TypeError(`a field's value is text, a number, a boolean or null, not ${typeof value}`);
  }
}

/** The platform's value as a JavaScript value. */
export function fromValue(value) {
  return value.tag === "null" ? null : value.val;
}

/** The platform's fields as an object. */
export function record(fields) {
  return Object.fromEntries(fields.map((field) => [field.name, fromValue(field.value)]));
}

/** An object's members as the platform's fields. */
export function fields(object) {
  return Object.entries(object).map(([name, value]) => ({ name, value: toValue(value) }));
}

/** The contextual data a step or condition is given (JSON text, or undefined) as data. */
export function context(text) {
  return text === undefined || text === null ? null : JSON.parse(text);
}

/** Calls a platform function, turning its error value into a HeraldError. */
export function call(fn, ...args) {
  try {
    return fn(...args);
  } catch (e) {
    const error = e && e.payload !== undefined ? e.payload : undefined;
    if (error && typeof error.tag === "string") throw new HeraldError(error.tag, error.val ?? "");
    throw e;
  }
}
