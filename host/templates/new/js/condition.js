// {{name}}: a condition of a flow. The flow goes on for recipients whose AGE is 18 or more.
import { record } from "./herald/sdk/values.js";

export const condition = {
  evaluate(recipient, _ctx) {
    const age = record(recipient).AGE;
    return typeof age === "number" && age >= 18;
  },
};
