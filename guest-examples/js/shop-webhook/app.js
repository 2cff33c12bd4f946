// An open webhook (world herald:platform/open-http-extension, configured --open) that a shop calls
// when an order is paid: it upserts the customer as a recipient (by EMAIL) and the order's lines
// as PURCHASES records, and answers what it stored. The shop signs its calls by the Standard
// Webhooks scheme with the secret the instance keeps as SHOP_SIGNING_SECRET (`PUT
// /extensions/secrets/SHOP_SIGNING_SECRET`): Herald checks the signature without the extension
// ever reading the secret, and a call not signed with it is answered 401. The payload:
//   {"customer": {"email", "first_name", "city"},
//    "order": {"id", "paid_at", "lines": [{"sku", "title", "price"}]}}
import { json, serve } from "../../../sdk/js/http.js";
import { info } from "../../../sdk/js/log.js";
import { upsert, upsertRecords } from "../../../sdk/js/recipients-write.js";
import { verifyStandardWebhook } from "../../../sdk/js/signatures.js";
import { HeraldError } from "../../../sdk/js/values.js";

serve(async (request) => {
  if (request.method !== "POST") return new Response("POST an order", { status: 405 });
  const body = new Uint8Array(await request.arrayBuffer());
  try {
    if (!verifyStandardWebhook("SHOP_SIGNING_SECRET", request.headers, body)) {
      return json(401, { error: "the call is not signed with the shop's secret" });
    }
  } catch (e) {
    if (e instanceof HeraldError && e.kind === "not-found")
      return json(503, { error: "set the secret SHOP_SIGNING_SECRET first" });
    throw e;
  }
  let customer, order;
  try {
    ({ customer, order } = JSON.parse(new TextDecoder().decode(body)));
    if (!customer.email || !order.id) throw new Error("customer.email and order.id are required");
  } catch (e) {
    return json(400, { error: `not an order: ${e.message}` });
  }
  const person = { EMAIL: customer.email, FIRST_NAME: customer.first_name, CITY: customer.city };
  for (const key of Object.keys(person)) if (person[key] === undefined) delete person[key];
  try {
    const stored = upsert(person);
    const lines = (order.lines ?? []).map((line, n) => ({
      ID: `${order.id}/${n + 1}`,
      PRODUCT: line.title,
      AMOUNT: line.price,
      PURCHASED_AT: order.paid_at,
    }));
    const written = upsertRecords("EMAIL", customer.email, "PURCHASES", lines);
    info(`order ${order.id}: ${written} lines for recipient ${stored.USER_ID}`);
    return json(200, { recipient: stored.USER_ID, purchases: written });
  } catch (e) {
    if (e instanceof HeraldError) return json(e.kind === "invalid" ? 400 : 409, { error: e.message });
    throw e;
  }
});
