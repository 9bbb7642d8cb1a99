import { z } from "zod";
import type { StoredMessage } from "./conversation-types";

/**
 * The optional parts of a stored message, checked when a conversation file is read. A file damaged by a
 * sync conflict, a hand edit or another version can hold anything there; the views render these parts
 * without further checks, so one bad part would stop the whole conversation from opening. A bad part is
 * dropped (a bad entry of a list: that entry); the message and its text stay. Unknown fields are kept,
 * so that a newer version's additions survive a rewrite of the message.
 */

const text = z.string();
const count = z.number();

const noteSource = z.object({ n: count, kind: z.literal("note"), path: text, title: text, headings: z.array(text), startLine: count, endLine: count, snippet: text }).loose();
const webSource = z.object({ n: count, kind: z.literal("web"), title: text, url: text, snippet: text }).loose();
const source = z.discriminatedUnion("kind", [noteSource, webSource]);

const searchHit = z.object({ path: text, title: text, folder: text, snippet: text, score: count, startLine: count }).loose();
const agentResult = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("note-created"), agent: text, text, path: text, title: text, preview: text }).loose(),
  z.object({ kind: z.literal("search-results"), agent: text, text, query: text, hits: z.array(searchHit), keywordOnly: text.optional() }).loose(),
  z.object({ kind: z.literal("summary"), agent: text, text, title: text, summary: text, sourceFiles: z.array(text) }).loose(),
  z.object({
    kind: z.literal("message"),
    agent: text,
    text,
    failed: z.enum(["not-found", "no-model", "index-not-ready", "no-active-note", "invalid-input", "failed"]).optional(),
  }).loose(),
]);

const usage = z.object({ promptTokens: count.optional(), completionTokens: count.optional() }).loose();
const step = z
  .object({
    thought: text.optional(),
    tool: z.object({ name: text, arguments: z.record(z.string(), z.unknown()), callId: text.optional() }).loose().optional(),
    result: text.optional(),
    isError: z.boolean().optional(),
    durationMs: count.optional(),
    usage: usage.optional(),
    step: count.optional(),
    outcome: z.enum(["ok", "error", "denied", "blocked"]).optional(),
  })
  .loose();

/** Each optional part and the check it must pass; lists are checked entry by entry. */
const PARTS = {
  mode: z.enum(["none", "rag", "web", "hybrid"]),
  sources: source,
  agent: agentResult,
  notices: text,
  stopped: z.boolean(),
  partial: z.boolean(),
  replyTo: text,
  error: text,
  steps: step,
  usage,
} as const;
const LISTS = new Set<keyof typeof PARTS>(["sources", "notices", "steps"]);

/** The message with its unreadable optional parts (or list entries) removed. Changes `message` in place. */
export function dropUnreadableParts(message: StoredMessage): StoredMessage {
  const record = message as unknown as Record<string, unknown>;
  for (const [name, schema] of Object.entries(PARTS) as [keyof typeof PARTS, z.ZodType][]) {
    const value = record[name];
    if (value === undefined) continue;
    if (LISTS.has(name)) {
      if (Array.isArray(value)) record[name] = value.filter((entry) => schema.safeParse(entry).success);
      else delete record[name];
    } else if (!schema.safeParse(value).success) {
      delete record[name];
    }
  }
  return message;
}
