// Lines kept with the execution for the instance's operator (herald:platform/log).
import { log } from "herald:platform/log@0.1.0";

export const debug = (message) => log("debug", String(message));
export const info = (message) => log("info", String(message));
export const warn = (message) => log("warn", String(message));
export const error = (message) => log("error", String(message));
