"""{{name}}: an authheader extension. Every call that the instance's extensions make to
api.example.com (bound by build.sh) carries `Authorization: Bearer <token>`, the token being the
instance's secret API_TOKEN (`PUT /extensions/secrets/API_TOKEN`)."""

import herald_sdk as herald
from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import authheader


class Authheader(exports.Authheader):
    def headers(self, host, method, path_with_query) -> authheader.Grant:
        token = herald.secrets.get("API_TOKEN")
        if not token:
            raise Err("the secret API_TOKEN is not set")
        # Reused for a minute: a changed secret reaches calls within that time.
        header = authheader.Header(name="authorization", value=f"Bearer {token}")
        return authheader.Grant(headers=[header], max_age_seconds=60)
