"""{{name}}: a monitor, run every five minutes (its schedule is written by build.sh). Healthy
while a campaign is running (the Global Data item CAMPAIGN_NAME is set)."""

import herald_sdk as herald
from wit_world import exports
from wit_world.exports import monitor


class Monitor(exports.Monitor):
    def check(self) -> monitor.Report:
        name = herald.global_data.get("CAMPAIGN_NAME")
        if name:
            return monitor.Report(healthy=True, message=f"running: {name}")
        return monitor.Report(healthy=False, message="no campaign is running")
