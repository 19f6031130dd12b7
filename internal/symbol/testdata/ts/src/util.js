// @ts-check
import { byId } from "./model";

/** @param {import("./model").Item[]} items */
export function labels(items) {
  return items.map((it) => it.label()).join(", ") + String(byId(items, 1));
}
