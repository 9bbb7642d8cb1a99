/**
 * The one rule for reasoning text that models print inside their answer: a reply may BEGIN (after
 * whitespace) with a `<think>…</think>` block (deepseek-r1, qwen3 on Ollama); that block is the model's
 * reasoning, the rest is the answer. An unterminated block is all reasoning. A `<think>` later in the
 * answer is text (a model explaining HTML tags). Used whole (cleanModelText) and streamed (providers).
 */
const OPEN = "<think>";
const CLOSE = "</think>";

export interface ThinkSplit {
  thinking: string;
  text: string;
}

/** Splits a streamed reply into reasoning and answer as the pieces arrive; tags may be split across pieces. */
export class ThinkSplitter {
  /** "after": the block just closed; whitespace before the answer is dropped, whichever piece it comes in. */
  private state: "start" | "thinking" | "after" | "answer" = "start";
  private buffer = "";

  push(piece: string): ThinkSplit {
    if (this.state === "answer") return { thinking: "", text: piece };
    if (this.state === "after") return { thinking: "", text: this.answerStart(piece) };
    this.buffer += piece;
    if (this.state === "start") {
      const trimmed = this.buffer.trimStart();
      const lower = trimmed.toLowerCase();
      if (lower.length < OPEN.length && OPEN.startsWith(lower)) return { thinking: "", text: "" }; // cannot tell yet
      if (!lower.startsWith(OPEN)) {
        this.state = "answer";
        const text = this.buffer;
        this.buffer = "";
        return { thinking: "", text };
      }
      this.state = "thinking";
      this.buffer = trimmed.slice(OPEN.length);
    }
    const end = this.buffer.toLowerCase().indexOf(CLOSE);
    if (end < 0) {
      // Keep what could be the start of a closing tag split across pieces.
      const keep = Math.min(this.buffer.length, CLOSE.length - 1);
      const thinking = this.buffer.slice(0, this.buffer.length - keep);
      this.buffer = this.buffer.slice(this.buffer.length - keep);
      return { thinking, text: "" };
    }
    const thinking = this.buffer.slice(0, end);
    const rest = this.buffer.slice(end + CLOSE.length);
    this.state = "after";
    this.buffer = "";
    return { thinking, text: this.answerStart(rest) };
  }

  private answerStart(piece: string): string {
    const text = piece.replace(/^\s+/, "");
    if (text) this.state = "answer";
    return text;
  }

  /** Whatever is still held back when the reply ends. */
  end(): ThinkSplit {
    const rest = this.buffer;
    this.buffer = "";
    if (this.state === "thinking") return { thinking: rest, text: "" };
    return { thinking: "", text: rest };
  }
}

/** A whole reply without its leading reasoning block. */
export function stripThinkBlocks(text: string): string {
  const splitter = new ThinkSplitter();
  return splitter.push(text).text + splitter.end().text;
}
