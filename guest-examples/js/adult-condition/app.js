// A condition (world herald:platform/condition-extension): the flow goes on for adults.
import { record } from "../../../sdk/js/values.js";

export const condition = {
  evaluate(recipient, _context) {
    const age = record(recipient).AGE;
    return age !== null && age !== undefined && age >= 18;
  },
};
