import type { z } from "zod";

/** A string that is a number as written, nothing around it ("5", "-0.5", "1e3"; not "5 notes", " 5", "0x10"). */
const NUMBER_TEXT = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

export type ScalarKind = "number" | "boolean";

/**
 * Small models often quote scalars ({"limit": "5"}, {"overwrite": "false"}): a string that is exactly a number
 * for a number field, or "true"/"false" for a boolean one, is read as meant. Anything else is left for the
 * schema to refuse with its usual message. Done here, not with z.coerce in the shapes, so the JSON Schema
 * clients and models are shown (MCP's inputSchema) still says number and boolean. `kindOf` says what a
 * top-level field is: from a zod shape (zodShapeKinds) or a JSON Schema (tools of the user's MCP servers).
 * The one reading of quoted scalars: tool arguments and askJson's near misses (a flow's typed output) use it.
 */
export function readScalarStrings(args: Record<string, unknown>, kindOf: (key: string) => ScalarKind | undefined): Record<string, unknown> {
  let input = args;
  for (const [key, value] of Object.entries(args)) {
    if (typeof value !== "string") continue;
    const kind = kindOf(key);
    const read =
      kind === "number" && NUMBER_TEXT.test(value) ? Number(value)
      : kind === "boolean" && (value === "true" || value === "false") ? value === "true"
      : undefined;
    if (read === undefined) continue;
    if (input === args) input = { ...args };
    input[key] = read;
  }
  return input;
}

/** kindOf for readScalarStrings from a zod object shape. */
export function zodShapeKinds(shape: Readonly<Record<string, z.core.$ZodType>>): (key: string) => ScalarKind | undefined {
  return (key) => (Object.prototype.hasOwnProperty.call(shape, key) ? scalarKind(shape[key]) : undefined);
}

/** "number" or "boolean" when the field is one (optional, nullable or with a default); undefined otherwise. */
function scalarKind(schema: z.core.$ZodType | undefined): ScalarKind | undefined {
  let def = schema?._zod.def;
  while (def && "innerType" in def && isWrapper(def.type)) def = (def.innerType as z.core.$ZodType)._zod.def;
  return def?.type === "number" || def?.type === "boolean" ? def.type : undefined;
}

function isWrapper(type: string): boolean {
  return type === "optional" || type === "nullable" || type === "default" || type === "prefault" || type === "readonly" || type === "nonoptional";
}
