// {{name}}: an open http extension (a webhook: called without credentials, so it may write but
// not read recipients). POST / with {"email": "...", "first_name": "..."} upserts the recipient
// with that EMAIL and answers its USER_ID.
import { serve, json } from "./herald/sdk/http.js";
import { upsert } from "./herald/sdk/recipients-write.js";
import { info } from "./herald/sdk/log.js";

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
  info(`contact ${payload.email} stored`);
  return json(200, { recipient: stored.USER_ID });
});
