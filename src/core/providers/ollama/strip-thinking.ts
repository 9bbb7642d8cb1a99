const OPEN = "<think>";
const CLOSE = "</think>";

/**
 * Reasoning models on Ollama (deepseek-r1, qwen3) put their thinking inside a leading
 * "<think>…</think>" block of the answer. The user asked for the answer, and agents parse JSON out of
 * it, so the block is dropped. Swallowed pieces are yielded as "" so the silence timeout still sees
 * progress while the model thinks.
 */
export async function* stripThinking(source: AsyncIterable<string>): AsyncGenerator<string> {
  let state: "start" | "thinking" | "answer" = "start";
  let buffer = "";
  for await (const piece of source) {
    if (state === "answer") {
      yield piece;
      continue;
    }
    buffer += piece;
    if (state === "start") {
      const trimmed = buffer.trimStart();
      if (trimmed.length < OPEN.length && OPEN.startsWith(trimmed)) {
        yield "";
        continue; // cannot tell yet
      }
      if (!trimmed.startsWith(OPEN)) {
        state = "answer";
        yield buffer;
        buffer = "";
        continue;
      }
      state = "thinking";
      buffer = trimmed.slice(OPEN.length);
    }
    const end = buffer.indexOf(CLOSE);
    if (end < 0) {
      buffer = buffer.slice(-CLOSE.length); // a closing tag may be split across pieces
      yield "";
      continue;
    }
    const rest = buffer.slice(end + CLOSE.length).replace(/^\s+/, "");
    state = "answer";
    buffer = "";
    yield rest;
  }
  if (state === "start" && buffer) yield buffer;
}
