"""{{name}}: a secure http extension (called with the instance's credentials). `GET /?email=...`
answers the recipient with that EMAIL as JSON, 404 when there is none."""

import herald_sdk as herald
from wit_world import exports


def answer(request: herald.Request) -> herald.Response:
    email = request.query("email")
    if not email:
        return herald.Response.json(400, {"message": "give ?email="})
    recipient = herald.recipients.get("EMAIL", email)
    if recipient is None:
        return herald.Response.json(404, {"message": f"no recipient {email}"})
    return herald.Response.json(200, recipient)


class IncomingHandler(exports.IncomingHandler):
    def handle(self, request, response_out):
        herald.serve(answer, request, response_out)
