// {{name}}: a secure http extension (called with the instance's credentials). GET /?email=...
// answers the recipient with that EMAIL as JSON, 404 when there is none.
import { json, serve } from "./herald/sdk/http.js";
import { get } from "./herald/sdk/recipients-read.js";

serve((request) => {
  const email = new URL(request.url).searchParams.get("email");
  if (!email) return json(400, { message: "give ?email=" });
  const recipient = get("EMAIL", email);
  return recipient ? json(200, recipient) : json(404, { message: `no recipient ${email}` });
});
