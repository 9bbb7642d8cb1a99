import type { ExchangeEntry } from "./agent-types";

/** What /log says when the conversation has no agent turn yet. */
export const NO_EXCHANGE_YET = "No agent exchange yet in this conversation.";

/**
 * /log's lines, the same on every host (the chat view fences them, the CLI prints them): each request as
 * sent, after the line saying what fitting the window cut from it, then the reply and its tool calls; last,
 * the limit that ended the turn, if one did (the last reply is then not a finished answer).
 * Secrets are already redacted by the loop. Empty when there is no exchange (NO_EXCHANGE_YET).
 */
export function exchangeLogLines(exchange: readonly ExchangeEntry[], limit?: string): string[] {
  const lines = exchange.flatMap((entry, i) => [
    `── request ${i + 1} ──`,
    ...(entry.fitted ? [`(${entry.fitted})`] : []),
    ...entry.request.map((m) => `[${m.role}${m.toolName ? ` ${m.toolName}` : ""}] ${m.content}`),
    `── reply ${i + 1} ──`,
    entry.reply,
    ...(entry.toolCalls ?? []).map((call) => `[tool call] ${call.name} ${JSON.stringify(call.arguments)}`),
  ]);
  return limit && lines.length > 0 ? [...lines, `── ${limit} ──`] : lines;
}
