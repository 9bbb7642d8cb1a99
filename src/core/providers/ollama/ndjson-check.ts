import type { FetchLike } from "../../ports/http";

export const INVALID_LINE_MESSAGE = "The answer from Ollama was cut off: it sent a line that is not JSON in the middle of the answer.";
/** The error text of the stand-in line; ollamaError turns it into INVALID_LINE_MESSAGE. */
export const INVALID_LINE_MARKER = "krypton: ollama stream line is not JSON";

/**
 * A fetch for Ollama's NDJSON streams that ends the stream at the first line that is not JSON.
 * `ollama/browser` would skip such a line with a raw `console.warn` of its text and carry on, so the
 * user saw garbage on stderr and an answer saved as if complete. Here the good lines before it pass
 * through, then one `{"error": INVALID_LINE_MARKER}` line ends the stream: the client throws it, and
 * ollamaError reports it like a cut stream (ProviderError "bad-response"; the text so far is kept and
 * marked incomplete). Ending the stream this way, rather than erroring it, keeps the lines already
 * queued from being dropped.
 */
export function checkedNdjsonFetch(fetch: FetchLike): FetchLike {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.ok || !response.body) return response;
    const decoder = new TextDecoder("utf-8");
    const encoder = new TextEncoder();
    let pending = "";
    let ended = false;
    const pass = (lines: string[], controller: TransformStreamDefaultController<Uint8Array>) => {
      let good = "";
      for (const line of lines) {
        if (!line.trim()) continue;
        try {
          JSON.parse(line);
          good += `${line}\n`;
        } catch {
          ended = true;
          controller.enqueue(encoder.encode(`${good}${JSON.stringify({ error: INVALID_LINE_MARKER })}\n`));
          controller.terminate();
          return;
        }
      }
      if (good) controller.enqueue(encoder.encode(good));
    };
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (ended) return;
          pending += decoder.decode(chunk, { stream: true });
          const lines = pending.split("\n");
          pending = lines.pop() ?? "";
          pass(lines, controller);
        },
        flush(controller) {
          if (ended) return;
          pending += decoder.decode();
          pass([pending], controller);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
