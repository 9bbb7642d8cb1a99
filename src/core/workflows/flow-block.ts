/** The fenced block language that marks a workflow inside a note. */
export const FLOW_BLOCK_LANGUAGE = "krypton-flow";

export interface FlowSource {
  /** The JSON text of the flow. */
  json: string;
  /** 0-based line of the block's first JSON line in the note (for messages). */
  line: number;
}

/**
 * The ```krypton-flow blocks of a note, in order (a note usually has one). Fences may use backticks or
 * tildes and be longer than three; the closing fence must be at least as long.
 */
export function flowBlocksIn(markdown: string): FlowSource[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: FlowSource[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^ {0,3}(`{3,}|~{3,})\s*([\w-]+)?/.exec(lines[i]);
    if (!open) continue;
    const fence = open[1];
    const end = lines.findIndex((l, k) => k > i && new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`).test(l));
    const close = end < 0 ? lines.length : end;
    if ((open[2] ?? "").toLowerCase() === FLOW_BLOCK_LANGUAGE) blocks.push({ json: lines.slice(i + 1, close).join("\n"), line: i + 1 });
    i = close;
  }
  return blocks;
}

/** Parses flow JSON with a message that says where it broke. */
export function parseFlowJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { ok: false, message: `the flow is not valid JSON: ${reason}` };
  }
}
