import type { IndexStatus } from "../core/indexing/index-status";
import { redact } from "../core/util/redact";
import { countOf, formatCount, oneLine } from "../core/util/text";

/**
 * Where the CLI writes. stdout carries results only (so `--json` output pipes cleanly); progress,
 * warnings and errors go to stderr. Every secret known to the run is masked before anything is written.
 */
export interface Output {
  /** A result (stdout). */
  out(text: string): void;
  /** A line of a result (stdout). */
  line(text?: string): void;
  /** Pretty JSON on stdout, one document. */
  json(value: unknown): void;
  /** "krypton: warning: ..." on stderr. */
  warn(message: string): void;
  /** "krypton: ..." on stderr. */
  error(message: string): void;
  /** A note for the person at the terminal (stderr): hints, the generated MCP token. */
  info(message: string): void;
  /** Progress that redraws itself on a TTY, silent otherwise. */
  progress(text: string): void;
  /** Removes the progress line. */
  clearProgress(): void;
  /** stdout is a terminal (colours, prompts). */
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  /** Adds values to mask from now on. */
  addSecrets(secrets: readonly string[]): void;
  /** Writes even a secret: used once, for the MCP token generated on start. */
  revealOnce(message: string): void;
  bold(text: string): string;
  dim(text: string): string;
}

export interface Stream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export function createOutput(stdout: Stream, stderr: Stream, env: Record<string, string | undefined> = {}): Output {
  const secrets: string[] = [];
  const mask = (text: string): string => redact(text, secrets);
  const color = stdout.isTTY === true && !env.NO_COLOR && env.TERM !== "dumb";
  let progressShown = false;
  let lastProgress = "";
  const clearProgress = () => {
    if (progressShown) {
      stderr.write("\r\x1b[2K");
      progressShown = false;
      lastProgress = "";
    }
  };
  const err = (text: string) => {
    clearProgress();
    stderr.write(terminalSafe(mask(text)));
  };

  return {
    out: (text) => {
      clearProgress();
      stdout.write(terminalSafe(mask(text)));
    },
    line: (text = "") => {
      clearProgress();
      stdout.write(terminalSafe(mask(text)) + "\n");
    },
    json: (value) => {
      clearProgress();
      stdout.write(mask(JSON.stringify(value, null, 2)) + "\n");
    },
    warn: (message) => err(`krypton: warning: ${message}\n`),
    error: (message) => err(`krypton: ${message}\n`),
    info: (message) => err(`${message}\n`),
    progress: (text) => {
      if (stderr.isTTY !== true) return;
      // A pseudo-terminal may report 0 columns: assume the classic 80.
      const width = Math.max(20, (stderr.columns || 80) - 1);
      const shown = text.length > width ? text.slice(0, width - 1) + "…" : text;
      if (shown === lastProgress) return;
      stderr.write("\r\x1b[2K" + mask(shown));
      progressShown = true;
      lastProgress = shown;
    },
    clearProgress,
    stdoutIsTTY: stdout.isTTY === true,
    stderrIsTTY: stderr.isTTY === true,
    addSecrets: (values) => {
      for (const v of values) if (!secrets.includes(v)) secrets.push(v);
    },
    revealOnce: (message) => {
      clearProgress();
      stderr.write(message + "\n");
    },
    bold: (text) => (color ? `\x1b[1m${text}\x1b[22m` : text),
    dim: (text) => (color ? `\x1b[2m${text}\x1b[22m` : text),
  };
}

/**
 * Text for a terminal: note names, titles, snippets and model answers come from others, and their control
 * characters would drive the terminal (clear it, set its title, write the clipboard). Each becomes U+FFFD,
 * visible; newlines and tabs stay, a carriage return only before a newline, and Krypton's own bold and dim
 * (bold(), dim()) stay. The bidi embedding, override and isolate characters (U+202A–U+202E, U+2066–U+2069)
 * become U+FFFD too: they reorder the rest of the line, so a path could show reversed ("Trojan Source").
 * JSON output is left alone: it is for programs, which need the exact text, and JSON.stringify escapes control characters.
 */
export function terminalSafe(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/\x1b\[(?:1|2|22)m|\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g, (m) => (m.length > 1 ? m : m === "\r" ? "" : "\uFFFD"));
}

/** "Indexing [██████░░░░░░] 1,234 / 10,000 notes (chunking)", "… 5,000 / 12,000 chunks (embedding)" */
export function progressLine(status: IndexStatus, barWidth = 24): string {
  const p = status.progress;
  if (!p) return status.state === "loading" ? "Loading the index…" : status.state === "indexing" ? "Indexing…" : `Index: ${status.state}`;
  if (p.phase === "saving") return "Saving the index…";
  const fraction = p.total > 0 ? Math.min(1, p.done / p.total) : 0;
  const filled = Math.round(fraction * barWidth);
  const bar = "█".repeat(filled) + "░".repeat(barWidth - filled);
  // What is counted depends on the phase: notes while reading, chunks while embedding.
  const unit = p.phase === "embedding" ? "chunks" : "notes";
  return `Indexing [${bar}] ${formatCount(p.done)} / ${formatCount(p.total)} ${unit} (${p.phase})`;
}

/** "1 note", "2 notes", "1,234 chunks". */
export { countOf, formatCount, oneLine };

/** Search results as the CLI prints them (`search`, and the search agent in `ask`/`chat`). */
export function printHits(
  output: Output,
  hits: readonly { path: string; title: string; score: number; snippet: string; startLine: number }[],
): void {
  hits.forEach((hit, i) => {
    output.line(`${String(i + 1).padStart(2)}. ${output.bold(hit.title)}  ${output.dim(`${hit.path}:${hit.startLine}`)}  ${hit.score.toFixed(2)}`);
    const snippet = oneLine(hit.snippet);
    if (snippet) output.line(`    ${snippet}`);
  });
}
