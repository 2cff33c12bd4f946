// {{name}}: an open http extension (a webhook: called without credentials, so it may write but
// not read recipients). POST / with {"email": "...", "first_name": "...", "purchases": [{"id":
// "...", "product": "...", "amount": 12.5, "at": "2026-11-27T10:00:00.000Z"}]} upserts the
// recipient with that EMAIL and its PURCHASES records (by their ID: a call delivered twice
// leaves the same data), and answers its USER_ID. Reference: herald/sdk/README.md.
import { json, serve } from "./herald/sdk/http.js";
import { info } from "./herald/sdk/log.js";
import { upsert, upsertRecords } from "./herald/sdk/recipients-write.js";

serve(async (request) => {
  if (request.method !== "POST") return json(405, { message: "POST a contact" });
  let payload;
  try {
    payload = await request.json();
  } catch (e) {
    return json(400, { message: `not JSON: ${e.message}` });
  }
  if (typeof payload.email !== "string") return json(400, { message: "email is required" });
  const person = { EMAIL: payload.email };
  if (typeof payload.first_name === "string") person.FIRST_NAME = payload.first_name;
  const stored = upsert(person);
  const purchases = Array.isArray(payload.purchases) ? payload.purchases : [];
  const records = purchases.map((p) => ({
    ID: String(p.id),
    PRODUCT: p.product ?? null,
    AMOUNT: p.amount ?? null,
    PURCHASED_AT: p.at ?? null,
  }));
  const written = records.length ? upsertRecords("USER_ID", stored.USER_ID, "PURCHASES", records) : 0;
  info(`contact ${payload.email} stored with ${written} purchases`);
  return json(200, { recipient: stored.USER_ID, purchases: written });
});
