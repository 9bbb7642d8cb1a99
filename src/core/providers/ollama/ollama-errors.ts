import type { FetchLike } from "../../ports/http";
import { ProviderError } from "../provider-error";
import { transportError, type RequestGuard } from "../request-guard";
import { INVALID_LINE_MARKER, INVALID_LINE_MESSAGE } from "./ndjson-check";

/** Ollama's own "the stream ended without done:true" message (ollama/browser). */
const CUT_STREAM = /did not receive done/i;

/** The command that installs a model, shown to the user. */
export function pullCommand(model: string): string {
  return `ollama pull ${model}`;
}

/** Maps anything `ollama/browser` or the transport throws to a ProviderError with plain words. */
export function ollamaError(err: unknown, guard: RequestGuard, baseUrl: string, model?: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const site = { service: "Ollama", url: baseUrl };
  if (guard.stopped() || guard.timedOut()) return transportError(err, guard, site);
  const e = err as { name?: string; status_code?: number; error?: string; message?: string };
  if (e?.name === "ResponseError" && typeof e.status_code === "number") {
    const status = e.status_code;
    const detail = String(e.error ?? e.message ?? "");
    if (status === 404 && /not found/i.test(detail)) {
      const name = model ?? /model "([^"]+)"/.exec(detail)?.[1] ?? "the model";
      return new ProviderError("model-missing", `Model '${name}' is not installed in Ollama: run \`${pullCommand(name)}\`.`, 404);
    }
    if (status === 400 && /does not support tools/i.test(detail)) {
      return new ProviderError(
        "tools-unsupported",
        `Model '${model ?? "this model"}' does not support tool calling in Ollama (its template has no tools), so it cannot call tools natively.`,
        400,
      );
    }
    if (status === 401 || status === 403) {
      return new ProviderError("unauthorized", `${status}: Ollama at ${baseUrl} refused the request (a proxy in front of it may need credentials).`, status);
    }
    if (status === 429) return new ProviderError("rate-limited", `429: Ollama at ${baseUrl} is busy; try again in a moment.`, 429);
    if (status >= 500) return new ProviderError("server", `Ollama failed (${status}): ${detail}`, status);
    return new ProviderError("bad-response", `Ollama rejected the request (${status}): ${detail}`, status);
  }
  const message = e?.message ?? String(err);
  if (message === INVALID_LINE_MARKER) return new ProviderError("bad-response", INVALID_LINE_MESSAGE);
  if (CUT_STREAM.test(message)) return new ProviderError("bad-response", "The answer from Ollama was cut off before it finished.");
  // A network-level failure is a TypeError in every fetch implementation; anything else that is not
  // a ResponseError is an {"error": ...} line Ollama sent in the middle of the stream.
  if (e?.name === "TypeError" || e?.name === "AbortError" || !guard.responded()) return transportError(err, guard, site);
  return new ProviderError("server", `Ollama failed while answering: ${message}`);
}

/**
 * The fetch handed to `ollama/browser`: an answer that cannot come from Ollama (an HTML page, or an error
 * that is not Ollama's JSON, like a web server's 404 for /api/tags) becomes "not an Ollama server at <url>"
 * here, before the library sees it. That also keeps the library's error path, which prints "Getting text
 * from response" to stdout with console.log, from ever running: stdout carries only results.
 */
export function ollamaFetch(fetch: FetchLike, baseUrl: string): FetchLike {
  return async (input, init) => {
    const response = await fetch(input, init);
    const type = response.headers.get("content-type") ?? "";
    const json = /json/i.test(type);
    // Ollama's errors are JSON with an "error" string; another server's JSON 404 ({"detail": "Not Found"})
    // would otherwise read as "model not installed".
    const foreignJson = !response.ok && json && !(await hasErrorField(response.clone()));
    if (/html/i.test(type) || (!response.ok && !json) || foreignJson) {
      await response.body?.cancel().catch(() => undefined);
      const what = /html/i.test(type) ? "it answered with a web page" : `it answered HTTP ${response.status}${type ? ` (${type.split(";")[0]})` : ""}`;
      return Promise.reject(new ProviderError("bad-response", `not an Ollama server at ${baseUrl}: ${what}. Check the Ollama URL (default http://127.0.0.1:11434).`, response.status));
    }
    return response;
  };
}

async function hasErrorField(response: Response): Promise<boolean> {
  try {
    const body = (await response.json()) as { error?: unknown } | null;
    return typeof body?.error === "string";
  } catch {
    return false;
  }
}
