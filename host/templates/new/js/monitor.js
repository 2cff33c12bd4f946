// {{name}}: a monitor, run every five minutes (its schedule is written by build.sh). Healthy
// while a campaign is running (the Global Data item CAMPAIGN_NAME is set).
import { get } from "./herald/sdk/global-data.js";

export const monitor = {
  check() {
    const name = get("CAMPAIGN_NAME");
    return name ? { healthy: true, message: `running: ${name}` } : { healthy: false, message: "no campaign is running" };
  },
};
