"""A secure http extension (world herald:platform/http-extension): `GET ?city=Paris` answers the
recipients of that city, with the number of their purchases."""

import herald_sdk as herald
from wit_world import exports


def find(request: herald.Request) -> herald.Response:
    city = request.query("city")
    if not city:
        return herald.Response.json(400, {"error": "?city= is missing"})
    escaped = city.replace("\\", "\\\\").replace('"', '\\"')
    found = herald.recipients.find(f'CITY=="{escaped}"', 100)
    answer = [
        {
            "id": r["USER_ID"],
            "email": r.get("EMAIL"),
            "purchases": len(herald.recipients.records("USER_ID", r["USER_ID"], "PURCHASES")),
        }
        for r in found
    ]
    return herald.Response.json(200, answer)


class IncomingHandler(exports.IncomingHandler):
    def handle(self, request, response_out):
        herald.serve(find, request, response_out)
