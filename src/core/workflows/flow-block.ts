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

/**
 * Parses flow JSON with a message that says where it broke: "at line 5, column 62", counted in the note
 * when `firstLine` (FlowSource.line) says where the JSON starts in it.
 */
export function parseFlowJson(text: string, firstLine = 0): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const at = jsonErrorOffset(text);
    let where = "";
    if (at !== null) {
      const before = text.slice(0, at);
      const lineStart = before.lastIndexOf("\n") + 1;
      where = ` at line ${firstLine + before.split("\n").length}, column ${at - lineStart + 1}`;
    }
    return { ok: false, message: `the flow is not valid JSON${where}: ${reason}` };
  }
}

const JSON_SCALAR = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
const JSON_ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/**
 * Where JSON.parse refuses `text`: the offset of the first character that cannot continue it (its length
 * when the text ends too early), or null when it is valid. Engines word the error differently and some
 * give no position ("Unexpected token ']'"), so the place is found here, alike on every host. A loop with
 * its own stack: a deeply nested hostile flow must not overflow the call stack.
 */
export function jsonErrorOffset(text: string): number | null {
  let i = 0;
  const stack: string[] = [];
  const skip = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  const string = (): boolean => {
    i++;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c === 0x5c) {
        JSON_ESCAPE.lastIndex = i;
        if (!JSON_ESCAPE.test(text)) return false;
        i = JSON_ESCAPE.lastIndex;
      } else i++;
    }
    return false;
  };
  const key = (): boolean => {
    skip();
    if (text[i] !== '"' || !string()) return false;
    skip();
    if (text[i] !== ":") return false;
    i++;
    return true;
  };
  let afterValue = false;
  for (;;) {
    skip();
    if (!afterValue) {
      const c = text[i];
      if (c === "{" || c === "[") {
        i++;
        skip();
        if (text[i] === (c === "{" ? "}" : "]")) {
          i++;
          afterValue = true;
        } else {
          stack.push(c);
          if (c === "{" && !key()) return i;
        }
        continue;
      }
      if (c === '"') {
        if (!string()) return i;
      } else {
        JSON_SCALAR.lastIndex = i;
        if (!JSON_SCALAR.test(text)) return i;
        i = JSON_SCALAR.lastIndex;
      }
      afterValue = true;
      continue;
    }
    const top = stack[stack.length - 1];
    if (top === undefined) return i < text.length ? i : null;
    if (text[i] === ",") {
      i++;
      if (top === "{" && !key()) return i;
      afterValue = false;
    } else if (text[i] === (top === "{" ? "}" : "]")) {
      stack.pop();
      i++;
    } else return i;
  }
}
