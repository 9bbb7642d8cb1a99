import { ThinkSplitter } from "../../util/think-blocks";

/**
 * The streamed form of the think-block rule (core/util/think-blocks.ts) for text-only streams: the
 * reasoning is dropped. Swallowed pieces are yielded as "" so the silence timeout still sees progress
 * while the model thinks.
 */
export async function* stripThinking(source: AsyncIterable<string>): AsyncGenerator<string> {
  const splitter = new ThinkSplitter();
  for await (const piece of source) yield splitter.push(piece).text;
  const rest = splitter.end().text;
  if (rest) yield rest;
}
