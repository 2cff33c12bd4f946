"""{{name}}: a condition of a flow. The flow goes on for recipients whose AGE is 18 or more."""

import herald_sdk as herald
from wit_world import exports


class Condition(exports.Condition):
    def evaluate(self, recipient, context) -> bool:
        age = herald.record(recipient).get("AGE")
        return age is not None and age >= 18
