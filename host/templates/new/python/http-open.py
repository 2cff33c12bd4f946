"""{{name}}: an open http extension (a webhook: called without credentials, so it may write but
not read recipients). `POST /` with `{"email": "...", "first_name": "...", "purchases": [{"id":
"...", "product": "...", "amount": 12.5, "at": "2026-11-27T10:00:00.000Z"}]}` upserts the
recipient with that EMAIL and its PURCHASES records (by their ID: a call delivered twice leaves
the same data), and answers its USER_ID. Reference: herald/sdk/herald_sdk/README.md."""

import herald_sdk as herald
from wit_world import exports


def contact(request: herald.Request) -> herald.Response:
    if request.method != "POST":
        return herald.Response.json(405, {"message": "POST a contact"})
    try:
        payload = request.json()
        email = payload["email"]
    except (ValueError, KeyError, TypeError) as e:
        return herald.Response.json(400, {"message": f"not a contact: {e}"})
    person = {"EMAIL": email}
    if isinstance(payload.get("first_name"), str):
        person["FIRST_NAME"] = payload["first_name"]
    stored = herald.recipients.upsert(person)
    records = [
        {"ID": str(p["id"]), "PRODUCT": p.get("product"), "AMOUNT": p.get("amount"), "PURCHASED_AT": p.get("at")}
        for p in payload.get("purchases") or []
    ]
    written = herald.recipients.upsert_records("USER_ID", stored["USER_ID"], "PURCHASES", records) if records else 0
    herald.log.info(f"contact {email} stored with {written} purchases")
    return herald.Response.json(200, {"recipient": stored["USER_ID"], "purchases": written})


class IncomingHandler(exports.IncomingHandler):
    def handle(self, request, response_out):
        herald.serve(contact, request, response_out)
