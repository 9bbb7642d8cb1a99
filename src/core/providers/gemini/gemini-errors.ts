import { ProviderError } from "../provider-error";
import { transportError, type RequestGuard } from "../request-guard";
import { redact } from "../../util/redact";
import { serviceWaitText } from "../retry";

interface GoogleErrorBody {
  error?: { code?: number; message?: string; status?: string; details?: { reason?: string; retryDelay?: unknown }[] };
}

/** Google's error JSON as the SDK passes it on (ApiError.message is the JSON text of the body). */
function parseGoogleError(message: string): { text: string; reason?: string; status?: string; retryAfterMs?: number } {
  try {
    const body = JSON.parse(message) as GoogleErrorBody;
    const err = body.error ?? {};
    const details = Array.isArray(err.details) ? err.details : [];
    const retryAfterMs = parseDuration(details.find((d) => d?.retryDelay !== undefined)?.retryDelay);
    return { text: err.message ?? message, reason: details.find((d) => d?.reason)?.reason, status: err.status, retryAfterMs };
  } catch {
    return { text: message };
  }
}

/** A google.protobuf.Duration in JSON ("38s", "0.5s", "1.250s") as milliseconds; undefined when unreadable. */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)s\s*$/.exec(value);
  return match ? Math.ceil(Number(match[1]) * 1000) : undefined;
}

/** Maps anything `@google/genai` or the transport throws to a ProviderError; never includes the key. */
export function geminiError(err: unknown, guard: RequestGuard, baseUrl: string, apiKey: string, model?: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const site = { service: "Gemini", url: baseUrl };
  if (guard.stopped() || guard.timedOut()) return transportError(err, guard, site);
  const e = err as { name?: string; status?: number; message?: string };
  if (e?.name === "ApiError" && typeof e.status === "number") {
    const status = e.status;
    const parsed = parseGoogleError(String(e.message ?? ""));
    const detail = redact(parsed.text, [apiKey]);
    if (status === 401 || status === 403 || parsed.reason === "API_KEY_INVALID" || /api key not valid/i.test(parsed.text)) {
      return new ProviderError("unauthorized", `${status}: the Gemini API key was rejected (${detail})`, status);
    }
    if (status === 404) {
      const name = model ? `'${model}'` : "";
      return new ProviderError("model-missing", `Gemini model ${name} was not found: check the model name in settings.`.replace("  ", " "), 404);
    }
    if (status === 429) {
      const wait = serviceWaitText("Gemini", parsed.retryAfterMs) ?? "wait a moment and try again";
      return new ProviderError("rate-limited", `429: Gemini rate limit or quota reached; ${wait} (${detail})`, 429, parsed.retryAfterMs);
    }
    if (status >= 500) return new ProviderError("server", `Gemini failed (${status}): ${detail}`, status);
    return new ProviderError("bad-response", `Gemini rejected the request (${status}): ${detail}`, status);
  }
  const message = String(e?.message ?? err);
  if (e?.name === "TypeError" || e?.name === "AbortError" || !guard.responded()) return transportError(err, guard, site);
  // Stream parse failures ("Incomplete JSON segment", "exception parsing stream chunk") and error chunks.
  const errorChunk = /"error"\s*:/.test(message) ? parseGoogleError(message.slice(message.indexOf("{"))).text : null;
  if (errorChunk) return new ProviderError("server", `Gemini failed while answering: ${redact(errorChunk, [apiKey])}`);
  // A chunk that is not JSON: the parser's words ("Unterminated string in JSON at position 40") help nobody.
  return new ProviderError(
    "bad-response",
    `Gemini sent part of its answer in a form Krypton could not read, so the answer stopped there. Try again; if it keeps happening, check that no proxy or VPN in between changes or cuts the connection.`,
  );
}
