import type { Source } from "../../core/chat/chat-types";

/** "[1]", "[2, 3]" or "[1][2]" in an answer; numbers refer to the answer's sources (1-based). */
const CITATION = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g;

export type CitationHandler = (source: Source, newTab: boolean) => void;

/** The source a citation number points to, or undefined when the model cited a number that does not exist. */
export function sourceFor(sources: readonly Source[], n: number): Source | undefined {
  return sources.find((s) => s.n === n);
}

export function sourceLabel(source: Source): string {
  return source.kind === "note" ? source.title : `${source.title} (${domainOf(source.url)})`;
}

/**
 * Sources as the "Sources" list shows them: one entry per note (every cited passage of it, in order) and
 * one per web page, in order of first appearance. The numbers stay per passage, so [n] keeps its meaning.
 */
export function groupSources(sources: readonly Source[]): Source[][] {
  const groups = new Map<string, Source[]>();
  for (const s of sources) {
    const key = s.kind === "note" ? `note:${s.path}` : `web:${s.url}`;
    const group = groups.get(key);
    if (group) group.push(s);
    else groups.set(key, [s]);
  }
  return [...groups.values()];
}

/** Where in a note a passage is: its nearest heading, else its lines. */
export function passageLabel(source: Extract<Source, { kind: "note" }>): string {
  const heading = source.headings[source.headings.length - 1];
  if (heading) return heading;
  return source.endLine > source.startLine ? `Lines ${source.startLine}–${source.endLine}` : `Line ${source.startLine}`;
}

/**
 * The URL when it is an http(s) address, else null. Web sources come from a search service's answer or a
 * conversation file in .krypton/chat: neither is trusted to put a javascript: or file: URL into an href
 * or window.open.
 */
export function webUrl(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
  } catch {
    return null;
  }
}

export function domainOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./, "");
  } catch {
    return url;
  }
}

/**
 * Turns citation markers in rendered text into keyboard-reachable links. Text inside code, pre and
 * existing links is left alone, and numbers without a matching source stay plain text.
 */
export function linkifyCitations(root: HTMLElement, sources: readonly Source[], onOpen: CitationHandler): number {
  if (sources.length === 0) return 0;
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
  const targets: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest("code, pre, a, .krypton-citation")) continue;
    CITATION.lastIndex = 0;
    if (CITATION.test(node.nodeValue ?? "")) targets.push(node as Text);
  }
  let made = 0;
  for (const textNode of targets) {
    const text = textNode.nodeValue ?? "";
    const frag = createFragment();
    let last = 0;
    CITATION.lastIndex = 0;
    for (let m = CITATION.exec(text); m; m = CITATION.exec(text)) {
      const numbers = m[1].split(",").map((s) => Number(s.trim()));
      if (!numbers.every((n) => sourceFor(sources, n))) continue;
      frag.appendText(text.slice(last, m.index));
      for (const n of numbers) {
        citationEl(frag, sourceFor(sources, n) as Source, onOpen);
        made++;
      }
      last = m.index + m[0].length;
    }
    if (last === 0) continue;
    frag.appendText(text.slice(last));
    textNode.replaceWith(frag);
  }
  return made;
}

function citationEl(parent: DocumentFragment, source: Source, onOpen: CitationHandler): HTMLElement {
  const el = parent.createEl("a", { cls: "krypton-citation", text: String(source.n) });
  el.setAttrs({
    role: "button",
    tabindex: 0,
    "data-source": source.n,
    "aria-label": `Source ${source.n}: ${sourceLabel(source)}`,
    title: sourceLabel(source),
  });
  el.addEventListener("click", (ev) => {
    ev.preventDefault();
    onOpen(source, ev.ctrlKey || ev.metaKey);
  });
  el.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    ev.preventDefault();
    onOpen(source, ev.ctrlKey || ev.metaKey);
  });
  return el;
}
