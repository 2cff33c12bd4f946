// The exports of steps, conditions and authheaders. Their WIT functions return a result whose
// error is a string, and componentize-js turns only a thrown string into it: anything else thrown
// (a HeraldError, a TypeError) would trap. These wrappers turn whatever the function throws into
// its message, so that the flow records the reason as the step's own error.
//
//   import { step as stepOf } from "./extensions.js";
//   export const step = stepOf((recipient, context) => { ... });   // the export is named `step`

function reason(e) {
  if (typeof e === "string") return e;
  if (e && typeof e.message === "string") return e.message;
  return String(e);
}

function declining(fn) {
  return (...args) => {
    try {
      return fn(...args);
    } catch (e) {
      throw reason(e);
    }
  };
}

/** A step's export from `run(recipient, context)`; what it throws declines with its message. */
export function step(run) {
  return { run: declining(run) };
}

/** A condition's export from `evaluate(recipient, context)` (a boolean). */
export function condition(evaluate) {
  return { evaluate: declining(evaluate) };
}

/** An authheader's export from `headers(host, method, pathWithQuery)` (a grant). */
export function authheader(headers) {
  return { headers: declining(headers) };
}
