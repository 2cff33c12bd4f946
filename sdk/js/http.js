// Http extensions: the standard web Request and Response (the engine's fetch event), with the
// calls the handler throws on answered 500 and logged.
import { error } from "./log.js";

/** Serves every call with `handler`, a function from a Request to a Response (or its promise). */
export function serve(handler) {
  addEventListener("fetch", (event) =>
    event.respondWith(
      (async () => {
        try {
          return await handler(event.request);
        } catch (e) {
          error(`${e?.name ?? "Error"}: ${e?.message ?? e}`);
          return new Response("the extension failed", { status: 500 });
        }
      })(),
    ),
  );
}

/** A JSON answer. */
export function json(status, data) {
  return new Response(JSON.stringify(data), { status, headers: { "content-type": "application/json" } });
}
