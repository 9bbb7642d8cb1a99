/**
 * Clozes as the Spaced Repetition plugin reads them: through its `clozePatterns` setting, strings like
 * `==[123;;]answer[;;hint]==` (the default) or `{{[c1::]answer[::hint]}}` (Anki-like). SR hands them to the
 * clozecraft library (0.4.0, its lockfile); this is Krypton's own reading of the same rules:
 * - `answer` is the deleted text; a bracket holding digits is the optional card number, a bracket holding
 *   `hint` the optional hint; text around them is literal (`\[` `\]` are literal brackets);
 * - a note with any numbered deletion is "classic": only numbered deletions count, and SR makes as many
 *   sibling cards as the highest number (deletions sharing a number are one card);
 * - else one whose number slot holds a/h/s letters is "overlapping": as many cards as the longest sequence;
 * - else every deletion is its own card.
 */
import { escapeRegExp } from "../util/text";

export const DEFAULT_CLOZE_PATTERNS = ["==[123;;]answer[;;hint]=="];

/** What SR's upgrade seeds clozePatterns with from the older convert* flags. */
export const LEGACY_CLOZE_PATTERNS = {
  highlights: "==[123;;]answer[;;hint]==",
  bold: "**[123;;]answer[;;hint]**",
  curly: "{{[123;;]answer[;;hint]}}",
} as const;

export interface Cloze {
  /** The matched text, delimiters, number and hint included. */
  raw: string;
  answer: string;
  /** "" when none. */
  hint: string;
  /** 0-based index in the text. */
  at: number;
  /** Which of the user's patterns matched it (their order): SR numbers unnumbered deletions pattern by pattern. */
  pattern: number;
  /** The card number of a numbered deletion (`==2;;x==`): deletions sharing it are one card. */
  group?: number;
  /** An overlapping deletion's letters (`==ash;;x==`): on the i-th card, letter i asks, hides or shows it. */
  sequence?: string;
}

/** One of SR's sibling cards of a cloze text: the deletions it asks, and those it hides without asking. */
export interface ClozeSibling {
  ask: number[];
  hide: number[];
}

export interface ClozeReading {
  /** Deletions in text order. */
  clozes: Cloze[];
  /** Sibling cards SR makes from them. */
  reviewCards: number;
}

type Field = "answer" | "hint" | "seq";
interface CompiledPattern {
  /** Literal text a matching line must contain (a cheap pre-check: this runs on every line of every deck). */
  literal: string;
  simple: RegExp;
  numbered: RegExp;
  overlapping: RegExp;
  order: Field[];
}

const BRACKET_BODY = String.raw`(?:\\\]|[^\]])*?`;
const NUM_SLOT = new RegExp(String.raw`\[${BRACKET_BODY}\d+${BRACKET_BODY}\]`);
const HINT_SLOT = new RegExp(String.raw`\[${BRACKET_BODY}hint${BRACKET_BODY}\]`);

/** A slot's regex: brackets removed, escaped brackets made literal, then `inject` adds the capture group. */
function slot(text: string, inject: (escaped: string) => string): string {
  return inject(escapeRegExp(text.slice(1, -1).replace(/\\\[/g, "[").replace(/\\]/g, "]")));
}

/** One pattern compiled, or null when SR could not use it either (clozecraft throws without all three parts). */
function compile(raw: string): CompiledPattern | null {
  const num = NUM_SLOT.exec(raw);
  const hint = HINT_SLOT.exec(raw);
  const answerAt = raw.indexOf("answer");
  if (!num || !hint || answerAt < 0) return null;
  const hintRe = `(?:${slot(hint[0], (s) => s.replace(/hint/g, "(.+?)"))})?`;
  const [first, second] = num.index < hint.index ? [num, hint] : [hint, num];
  const build = (numRe: string) => {
    const [firstRe, secondRe] = first === num ? [numRe, hintRe] : [hintRe, numRe];
    const source =
      escapeRegExp(raw.slice(0, first.index)) +
      firstRe +
      escapeRegExp(raw.slice(first.index + first[0].length, second.index)) +
      secondRe +
      escapeRegExp(raw.slice(second.index + second[0].length));
    return new RegExp(source.replace("answer", "(.+?)"), "g");
  };
  const positions: Record<Field, number> = { answer: answerAt, hint: hint.index, seq: num.index };
  const order = (["answer", "hint", "seq"] as Field[]).sort((a, b) => positions[a] - positions[b]);
  const literal = raw.slice(0, Math.min(answerAt, num.index, hint.index));
  return {
    literal,
    simple: build(""),
    numbered: build(slot(num[0], (s) => s.replace(/\d+/g, String.raw`(\d+)`))),
    overlapping: build(slot(num[0], (s) => s.replace(/\d+/g, "([ash]+)"))),
    order,
  };
}

/** A pattern without its number and hint slots, "answer" still in it ("{{[c1::]answer[::hint]}}" → "{{answer}}"); null when SR cannot use it. */
export function plainClozeTemplate(raw: string): string | null {
  if (!compile(raw)) return null;
  return raw.replace(NUM_SLOT, "").replace(HINT_SLOT, "");
}

const compiledCache = new Map<string, CompiledPattern[]>();

function compiled(patterns: readonly string[]): CompiledPattern[] {
  const key = patterns.join("\n");
  let out = compiledCache.get(key);
  if (!out) {
    out = patterns.map(compile).filter((p): p is CompiledPattern => p !== null);
    compiledCache.set(key, out);
  }
  return out;
}

const TYPES = ["numbered", "overlapping", "simple"] as const;

/** The note's cloze type: the highest-priority one any pattern finds (classic, then overlapping, then simple). */
function clozeType(text: string, candidates: readonly CompiledPattern[]): (typeof TYPES)[number] | undefined {
  return candidates.length ? TYPES.find((t) => candidates.some((p) => text.search(p[t]) >= 0)) : undefined;
}

/** Whether readClozes would find a cloze in the text, without reading them (the parser asks this of every line). */
export function hasClozes(text: string, patterns: readonly string[] = DEFAULT_CLOZE_PATTERNS): boolean {
  return clozeType(text, compiled(patterns).filter((p) => text.includes(p.literal))) !== undefined;
}

/** The clozes in a text under the user's patterns, and how many sibling cards SR makes of them. */
export function readClozes(text: string, patterns: readonly string[] = DEFAULT_CLOZE_PATTERNS): ClozeReading {
  const candidates = compiled(patterns).filter((p) => text.includes(p.literal));
  const type = clozeType(text, candidates);
  if (!type) return { clozes: [], reviewCards: 0 };
  const clozes: Cloze[] = [];
  let reviewCards = 0;
  for (const [pattern, p] of candidates.entries()) {
    const order = type === "simple" ? p.order.filter((f) => f !== "seq") : p.order;
    for (const m of text.matchAll(p[type])) {
      const field = (f: Field) => m[order.indexOf(f) + 1] ?? "";
      const seq = field("seq");
      const extra = type === "numbered" ? { group: parseInt(seq, 10) } : type === "overlapping" ? { sequence: seq } : {};
      clozes.push({ raw: m[0], answer: field("answer"), hint: field("hint"), at: m.index ?? 0, pattern, ...extra });
      reviewCards = type === "simple" ? reviewCards + 1 : Math.max(reviewCards, type === "numbered" ? parseInt(seq, 10) : seq.length);
    }
  }
  clozes.sort((a, b) => a.at - b.at);
  return { clozes, reviewCards };
}

/**
 * SR's sibling cards of a cloze reading, in order (clozecraft's getCardFront): the i-th of a numbered note
 * asks every deletion numbered i+1 (none, for a number no deletion has); of an overlapping one, the deletions
 * whose i-th letter is "a", hiding the "h" ones (a missing letter shows); otherwise the i-th deletion alone,
 * counted as clozecraft 0.4 (SR's lockfile) counts them: the first pattern's deletions in text order, then the
 * next pattern's (`==a== **b** ==c==` asks a, c, then b with highlights before bold).
 */
export function clozeSiblings(reading: ClozeReading): ClozeSibling[] {
  const { clozes } = reading;
  const pick = (test: (c: Cloze) => boolean) => clozes.flatMap((c, i) => (test(c) ? [i] : []));
  const bySrCount = srOrder(clozes);
  return Array.from({ length: reading.reviewCards }, (_, k) => {
    if (clozes.some((c) => c.group !== undefined)) return { ask: pick((c) => c.group === k + 1), hide: [] };
    if (clozes.some((c) => c.sequence !== undefined)) return { ask: pick((c) => c.sequence?.[k] === "a"), hide: pick((c) => c.sequence?.[k] === "h") };
    return { ask: [bySrCount[k]], hide: [] };
  });
}

/**
 * Indices of text-ordered clozes in the order clozecraft 0.4 found them: pattern by pattern, text order within one (a
 * stable sort). The k-th of them is an unnumbered cloze's k-th sibling card, in SR and in the Anki export alike.
 */
export function srOrder(clozes: readonly Cloze[]): number[] {
  return clozes.map((_, i) => i).sort((a, b) => clozes[a].pattern - clozes[b].pattern);
}

/**
 * A cloze text as one sibling asks it: its deletions as "[hint]" or "[...]", hidden ones as "(hint)" or "(...)",
 * the rest as their answers. Made as clozecraft makes a card's front, each deletion in turn replacing the first
 * occurrence of its text, so where two patterns match the same text (`==**x**==` with highlights and bold) the
 * sibling asking the inner deletion shows a blank as SR's does, not the outer one's answer.
 */
export function askCloze(text: string, clozes: readonly Cloze[], sibling: ClozeSibling): string {
  let out = text;
  for (const i of srOrder(clozes)) {
    const c = clozes[i];
    const shown = sibling.ask.includes(i) ? `[${c.hint || "..."}]` : sibling.hide.includes(i) ? `(${c.hint || "..."})` : c.answer;
    out = out.replace(c.raw, () => shown);
  }
  return out;
}
