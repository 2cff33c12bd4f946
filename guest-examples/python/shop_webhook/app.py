"""An open webhook (world herald:platform/open-http-extension, configured `--open`) that a shop
calls when an order is paid: it upserts the customer as a recipient (by EMAIL) and the order's
lines as PURCHASES records, and answers what it stored. The shop signs its calls by the Standard
Webhooks scheme with the secret the instance keeps as SHOP_SIGNING_SECRET (`PUT
/extensions/secrets/SHOP_SIGNING_SECRET`): Herald checks the signature without the extension ever
reading the secret, and a call not signed with it is answered 401.

The shop's payload:
    {"customer": {"email": "...", "first_name": "...", "city": "..."},
     "order": {"id": "A-1001", "paid_at": "2026-11-20T10:00:00Z",
               "lines": [{"sku": "TEA-1", "title": "Green tea", "price": 4.5}]}}
"""

import herald_sdk as herald
from wit_world import exports


def paid(request: herald.Request) -> herald.Response:
    if request.method != "POST":
        return herald.Response.text(405, "POST an order")
    try:
        if not herald.signatures.verify_standard_webhook("SHOP_SIGNING_SECRET", request):
            return herald.Response.json(401, {"error": "the call is not signed with the shop's secret"})
    except herald.HeraldError as e:
        if e.kind != "not-found":
            raise
        return herald.Response.json(503, {"error": "set the secret SHOP_SIGNING_SECRET first"})
    try:
        payload = request.json()
        customer, order = payload["customer"], payload["order"]
        email = customer["email"]
    except (ValueError, KeyError, TypeError) as e:
        return herald.Response.json(400, {"error": f"not an order: {e}"})
    person = {"EMAIL": email, "FIRST_NAME": customer.get("first_name"), "CITY": customer.get("city")}
    try:
        stored = herald.recipients.upsert({k: v for k, v in person.items() if v is not None})
        lines = [
            {"ID": f"{order['id']}/{n}", "PRODUCT": line["title"], "AMOUNT": line["price"], "PURCHASED_AT": order["paid_at"]}
            for n, line in enumerate(order.get("lines", []), start=1)
        ]
        written = herald.recipients.upsert_records("EMAIL", email, "PURCHASES", lines)
    except herald.HeraldError as e:
        return herald.Response.json(400 if e.kind == "invalid" else 409, {"error": str(e)})
    herald.log.info(f"order {order['id']}: {written} lines for recipient {stored['USER_ID']}")
    return herald.Response.json(200, {"recipient": stored["USER_ID"], "purchases": written})


class IncomingHandler(exports.IncomingHandler):
    def handle(self, request, response_out):
        herald.serve(paid, request, response_out)
