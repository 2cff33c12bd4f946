// A secure http extension (world herald:platform/http-extension): GET ?city=Paris answers the
// recipients of that city, with the number of their purchases.
import { json, serve } from "../../../sdk/js/http.js";
import { find, records } from "../../../sdk/js/recipients-read.js";

serve((request) => {
  const city = new URL(request.url).searchParams.get("city");
  if (!city) return json(400, { error: "?city= is missing" });
  const escaped = city.replaceAll("\\", "\\\\").replaceAll('"', '\\"');
  const found = find(`CITY=="${escaped}"`, 100).map((r) => ({
    id: r.USER_ID,
    email: r.EMAIL,
    purchases: records("USER_ID", r.USER_ID, "PURCHASES").length,
  }));
  return json(200, found);
});
