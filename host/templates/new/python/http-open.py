"""{{name}}: an open http extension (a webhook: called without credentials, so it may write but
not read recipients). `POST /` with `{"email": "...", "first_name": "..."}` upserts the
recipient with that EMAIL and answers its USER_ID."""

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
    herald.log.info(f"contact {email} stored")
    return herald.Response.json(200, {"recipient": stored["USER_ID"]})


class IncomingHandler(exports.IncomingHandler):
    def handle(self, request, response_out):
        herald.serve(contact, request, response_out)
