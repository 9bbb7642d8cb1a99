import { z } from "zod";

/**
 * The one schema of a workflow file (a ```krypton-flow block or a .json file). Koog's agents-protocol
 * files load unchanged: its `runtime` field is accepted and ignored, operation names may be upper-case,
 * and its MCP tool objects are accepted (resolved by name against the servers configured in settings:
 * a flow can never start a process of its own).
 */

export const FINISH = "__finish__";

export const COMPARISONS = ["equals", "not_equals", "more", "less", "more_or_equal", "less_or_equal"] as const;
export const LOGICAL = ["not", "and", "or"] as const;
export const OPERATIONS = [...COMPARISONS, ...LOGICAL] as const;
export type Operation = (typeof OPERATIONS)[number];

export const VALUE_TYPES = ["string", "int", "double", "boolean", "string[]", "int[]", "double[]", "boolean[]"] as const;
export type DeclaredValueType = (typeof VALUE_TYPES)[number];

const operation = z
  .string()
  .transform((op) => op.toLowerCase())
  .pipe(z.enum(OPERATIONS, { error: (issue) => `unknown operation "${String(issue.input)}": use one of ${OPERATIONS.join(", ")}` }));

const primitive = z.union([z.string(), z.number(), z.boolean()]);

export type Condition =
  | { variable: string; operation: Operation; value: string | number | boolean }
  | { operation: "and" | "or"; conditions: Condition[] }
  | { operation: "not"; condition: Condition };

export const conditionSchema: z.ZodType<Condition> = z.lazy(() =>
  z.union([
    z.strictObject({ variable: z.string().min(1), operation, value: primitive }),
    z.strictObject({
      operation: z
        .string()
        .transform((op) => op.toLowerCase())
        .pipe(z.enum(["and", "or"])),
      conditions: z.array(conditionSchema).min(1),
    }),
    z.strictObject({
      operation: z
        .string()
        .transform((op) => op.toLowerCase())
        .pipe(z.literal("not")),
      condition: conditionSchema,
    }),
  ]),
);

const config = z
  .object({
    temperature: z.number().min(0).max(2).optional(),
    maxIterations: z.number().int().min(1).max(50).optional(),
    maxTokens: z.number().int().min(1).optional(),
    topP: z.number().min(0).max(1).optional(),
  })
  .loose();

const prompt = z.object({ system: z.string().optional(), user: z.string().optional() }).loose();

const taskParams = z
  .object({
    task: z.string().min(1, "a task agent needs params.task"),
    toolNames: z.array(z.string()).optional(),
    /** What the agent answers with; inferred from its outgoing conditions when absent. */
    output: z.enum(VALUE_TYPES).optional(),
  })
  .loose();

const verifyParams = z.object({ task: z.string().min(1, "a verify agent needs params.task (what to check)") }).loose();

export const TRANSFORM_PARSERS = ["string", "int", "double", "number", "boolean", "json"] as const;

const transformParams = z
  .object({
    /** A variable to pick: "input.feedback", "input.input", "input.data". */
    pick: z.string().optional(),
    /** A text with {{input}} / {{input.feedback}} / {{run.input}} placeholders, filled once (never re-expanded). */
    template: z.string().optional(),
    parse: z.enum(TRANSFORM_PARSERS).optional(),
    trim: z.boolean().optional(),
    lowercase: z.boolean().optional(),
  })
  .loose();

const agentCommon = {
  name: z.string().min(1).refine((n) => n !== FINISH, `"${FINISH}" is reserved for the end of the flow`),
  description: z.string().optional(),
  model: z.string().optional(),
  /** Koog's runtime selector: accepted and ignored. */
  runtime: z.string().optional(),
  config: config.optional(),
  prompt: prompt.optional(),
  maxVisits: z.number().int().min(1).optional(),
};

export const agentSchema = z.discriminatedUnion("type", [
  z.object({ ...agentCommon, type: z.literal("task"), params: taskParams }),
  z.object({ ...agentCommon, type: z.literal("verify"), params: verifyParams }),
  z.object({ ...agentCommon, type: z.literal("transform"), params: transformParams.default({}) }),
]);
export type FlowAgent = z.infer<typeof agentSchema>;

/** A tool by name (built-in tool, configured MCP server, or `server:tool`), or Koog's object form. */
const toolSchema = z.union([
  z.string().min(1),
  z.object({ name: z.string().min(1), type: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }).loose(),
]);

export const transitionSchema = z.strictObject({
  from: z.string().min(1),
  to: z.string().min(1),
  condition: conditionSchema.optional(),
});
export type FlowTransition = z.infer<typeof transitionSchema>;

export const flowSchema = z.object({
  $schema: z.string().optional(),
  id: z.string().min(1),
  version: z.string().optional(),
  description: z.string().optional(),
  defaultModel: z.string().optional(),
  start: z.string().optional(),
  maxSteps: z.number().int().min(1).max(10_000).optional(),
  /** Where to go when a bound is hit (instead of ending with the bound as its status: "step limit", "time limit", "loop guard"). */
  onLimit: z.string().optional(),
  tools: z.array(toolSchema).optional(),
  agents: z.array(agentSchema).min(1, "a flow needs at least one agent"),
  transitions: z.array(transitionSchema).default([]),
});
export type Flow = z.infer<typeof flowSchema>;

export function toolName(tool: NonNullable<Flow["tools"]>[number]): string {
  return typeof tool === "string" ? tool : tool.name;
}

/** The JSON Schema shipped with the plugin (generated from this one zod schema). */
export function flowJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(flowSchema, { io: "input", unrepresentable: "any" });
}
