// A step (world herald:platform/step-extension): sets the recipient's COUNTRY from the triggering
// call's contextual data ({"country": "FR"}), or to "FR".

import { step as heraldStep } from "../../../sdk/js/extensions.js";
import { info } from "../../../sdk/js/log.js";
import { update } from "../../../sdk/js/recipients-write.js";
import { context, record } from "../../../sdk/js/values.js";

// What it throws (a HeraldError when the recipient cannot be updated) declines the step with the
// error's message.
export const step = heraldStep((recipient, ctx) => {
  const person = record(recipient);
  const country = context(ctx)?.country ?? "FR";
  update("USER_ID", person.USER_ID, { COUNTRY: country });
  info(`recipient ${person.USER_ID}: COUNTRY=${country}`);
});
