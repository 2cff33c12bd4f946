"""A condition (world herald:platform/condition-extension): the flow goes on for adults."""

import herald_sdk as herald
from wit_world import exports


class Condition(exports.Condition):
    def evaluate(self, recipient, context) -> bool:
        age = herald.record(recipient).get("AGE")
        return age is not None and age >= 18
