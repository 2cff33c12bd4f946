// {{name}}: an authheader extension. Every call that the instance's extensions make to
// api.example.com (bound by build.sh) carries `Authorization: Bearer <token>`, the token being
// the instance's secret API_TOKEN (PUT /extensions/secrets/API_TOKEN).

import { authheader as heraldAuthheader } from "./herald/sdk/extensions.js";
import { get } from "./herald/sdk/secrets.js";

export const authheader = heraldAuthheader((_host, _method, _pathWithQuery) => {
  const token = get("API_TOKEN");
  if (!token) throw new Error("the secret API_TOKEN is not set");
  // Reused for a minute: a changed secret reaches calls within that time.
  return { headers: [{ name: "authorization", value: `Bearer ${token}` }], maxAgeSeconds: 60 };
});
