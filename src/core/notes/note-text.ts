import { noteMetadata, readFrontmatter } from "../indexing/frontmatter";
import { baseNameOf } from "./note-paths";
import { isFunctionWord, LANGUAGES, stemsOf, stemWord } from "../indexing/text-analyzer";

/** Text helpers for the agents: note bodies, titles, previews, parts for map-reduce, topic matching. */

/** A note's text without its frontmatter (metadata, not content to summarize), plus its title. */
export function readableNote(path: string, content: string): { title: string; body: string } {
  const lines = content.replace(/^\uFEFF/, "").split(/\r?\n/);
  const fm = readFrontmatter(lines);
  const bodyLines = fm ? lines.slice(fm.endLine + 1) : lines;
  const body = bodyLines.join("\n").trim();
  const title = (fm ? noteMetadata(fm.fields).title : null) ?? firstHeading(body) ?? baseNameOf(path);
  return { title, body };
}

/** The first "# " heading's text, without markdown emphasis; null when there is none. */
export function firstHeading(markdown: string): string | null {
  const m = /^#[ \t]+(.+?)[ \t#]*$/m.exec(markdown);
  if (!m) return null;
  const title = m[1].replace(/[*_`]+/g, "").replace(/\[\[([^\]|]*\|)?([^\]]*)\]\]/g, "$2").trim();
  return title || null;
}

/** A short plain-text preview of generated markdown: its text without headings, up to maxChars. */
export function previewOf(markdown: string, maxChars = 200): string {
  const flat = markdown
    .replace(/^#{1,6}[ \t].*$/gm, "")
    .replace(/^[ \t]*(?:[-*+]|\d+\.)[ \t]+/gm, "")
    .replace(/[*_`>]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
  if (flat.length <= maxChars) return flat;
  const cut = flat.slice(0, maxChars);
  const space = cut.lastIndexOf(" ");
  return `${space > maxChars / 2 ? cut.slice(0, space) : cut}…`;
}

/**
 * Splits text into parts of at most maxChars, at paragraph breaks where possible, then at line breaks,
 * then hard. Nothing is dropped: joining the parts gives back every paragraph.
 */
export function splitIntoParts(text: string, maxChars: number): string[] {
  const pieces: string[] = [];
  for (const paragraph of text.split(/\n[ \t]*\n/)) {
    if (!paragraph.trim()) continue;
    if (paragraph.length <= maxChars) {
      pieces.push(paragraph);
      continue;
    }
    for (const line of paragraph.split("\n")) {
      for (let i = 0; i < line.length; i += maxChars) pieces.push(line.slice(i, i + maxChars));
    }
  }
  const parts: string[] = [];
  let current = "";
  for (const piece of pieces) {
    const next = current ? `${current}\n\n${piece}` : piece;
    if (next.length <= maxChars) {
      current = next;
    } else {
      if (current) parts.push(current);
      current = piece;
    }
  }
  if (current) parts.push(current);
  return parts;
}

/** At most maxWords whitespace-separated words; "…" marks a cut. */
export function truncateWords(text: string, maxWords: number): string {
  const words = text.trim().split(/\s+/);
  if (words.length <= maxWords) return text.trim();
  return `${words.slice(0, maxWords).join(" ")} …`;
}

const STOPWORDS = new Set(
  (
    "a an and are as at be by for from how i in into is it its me my note notes of on or our that the their them " +
    "this to was what when where which who why with about your you do does did all any some"
  ).split(" "),
);

/** The words of a topic that carry meaning ("the history of Rome" → ["history", "rome"], "el sueño" → ["sueño"]). */
export function significantWords(topic: string): string[] {
  const words = topic.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const significant = words.filter((w) => !STOPWORDS.has(w) && !isFunctionWord(w));
  return [...new Set(significant.length ? significant : words)];
}

/**
 * True when the text mentions any significant word of the topic, case-insensitively, as a word or the
 * start of one ("network" matches "networks", "networking"; "art" does not match "start"). Words under
 * four letters must match whole, so "AI" does not match "said".
 */
export function mentionsTopic(text: string, topicWords: string[]): boolean {
  return topicWordsMentioned(text, topicWords) > 0;
}

/** How many of the topic's words the text mentions (matched as in mentionsTopic, or by stem in any supported language). */
export function topicWordsMentioned(text: string, topicWords: string[]): number {
  if (!topicWords.length) return 0;
  const tokens = new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  // Stems in every supported language, accents folded: "sueño" finds "sueños", "telefono" finds "teléfono".
  let stems: Set<string> | null = null;
  let count = 0;
  for (const word of topicWords) {
    if (tokens.has(word)) count++;
    else if (LANGUAGES.some((lang) => (stems ??= stemsOf(text)).has(stemWord(word, lang)))) count++;
    else if (word.length >= 4) {
      for (const token of tokens) {
        if (token.startsWith(word)) {
          count++;
          break;
        }
      }
    }
  }
  return count;
}

/**
 * The texts that really mention a topic, in their order: those naming all its words ("machine learning"
 * keeps "machine learning models", not "the washing machine"); when none does, those naming at least half.
 */
export function mentioningTopic<T>(items: T[], textOf: (item: T) => string, topicWords: string[]): T[] {
  const counted = items.map((item) => ({ item, n: topicWordsMentioned(textOf(item), topicWords) }));
  const best = counted.reduce((max, c) => Math.max(max, c.n), 0);
  const needed = best === topicWords.length ? best : Math.max(1, Math.ceil(topicWords.length / 2));
  return counted.filter((c) => c.n >= needed).map((c) => c.item);
}
