"""{{name}}: a step of a flow. It sets the recipient's COUNTRY from the triggering call's
contextual data (`{"country": "FR"}`), or to "FR"."""

import herald_sdk as herald
from componentize_py_types import Err
from wit_world import exports


class Step(exports.Step):
    def run(self, recipient, context) -> None:
        person = herald.record(recipient)
        country = (herald.context(context) or {}).get("country", "FR")
        try:
            herald.recipients.update("USER_ID", person["USER_ID"], {"COUNTRY": country})
        except herald.HeraldError as e:
            raise Err(str(e)) from e
        herald.log.info(f"recipient {person['USER_ID']}: COUNTRY={country}")
