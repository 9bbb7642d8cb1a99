/**
 * What history search keeps of each conversation between searches, so a search re-reads only the
 * conversations whose files changed (each keystroke in the history box is a search; a history of 2,000
 * conversations is 60,000 files or more).
 *
 * Per conversation it keeps the distinct whitespace-free runs ("words", with their punctuation) of its
 * lower-cased messages, joined by "\n". A query without whitespace occurs in a message exactly when it
 * occurs inside one of those runs, so the answer is the same as scanning the messages, in a fraction of
 * the memory. A query with whitespace occurs only where each of its whitespace-free parts occurs in some
 * word: when one does not, the answer is no; otherwise, as for a query not found in words cut off by the
 * size cap, the answer is "unknown" and the caller reads the conversation.
 *
 * An entry is valid while its key is: the head file's size and time and the record file names. Records
 * are only ever created, removed or, while an answer streams, replaced: a conversation with a message
 * still partial is not cached at all. The store also drops an entry on each of its own writes.
 */
import type { StoredMessage } from "./conversation-types";

/** Characters of words kept per conversation; a longer conversation keeps the first ones (see above). */
export const SEARCH_WORDS_PER_CONVERSATION = 32_000;
/** Characters of words kept in all; past that, conversations are not cached (and read on each search). */
export const SEARCH_WORDS_TOTAL = 8_000_000;

interface Entry {
  key: string;
  words: string;
  /** False when words were cut at the cap: a miss there is not an answer. */
  complete: boolean;
}

export type CachedMatch = "yes" | "no" | "unknown";

export class ConversationSearchCache {
  private readonly entries = new Map<string, Entry>();
  private chars = 0;
  /** Bumped by every write of the store: a read that started before one is not cached. */
  private generation = 0;

  /** The key of a conversation's files: head size and time, and the record names. */
  static key(head: { size: number | null; mtime: number | null }, recordNames: readonly string[]): string {
    return `${head.size}:${head.mtime}:${recordNames.join("/")}`;
  }

  get stamp(): number {
    return this.generation;
  }

  /** Whether the conversation's messages contain the (lower-cased, trimmed) needle, from memory. */
  match(id: string, key: string, needle: string): CachedMatch {
    const entry = this.entries.get(id);
    if (!entry || entry.key !== key) return "unknown";
    const parts = needle.split(/\s+/);
    if (parts.length === 1) return entry.words.includes(needle) ? "yes" : entry.complete ? "no" : "unknown";
    return entry.complete && parts.some((p) => !entry.words.includes(p)) ? "no" : "unknown";
  }

  /** Keeps the messages' words under key, unless a write came since `stamp` or a message is still partial. */
  fill(id: string, key: string, messages: readonly StoredMessage[], stamp: number): void {
    this.forget(id);
    if (stamp !== this.generation || messages.some((m) => m.partial)) return;
    const seen = new Set<string>();
    for (const m of messages) for (const w of m.content.toLowerCase().split(/\s+/)) if (w) seen.add(w);
    let words = [...seen].join("\n");
    const complete = words.length <= SEARCH_WORDS_PER_CONVERSATION;
    if (!complete) words = words.slice(0, SEARCH_WORDS_PER_CONVERSATION);
    if (this.chars + words.length > SEARCH_WORDS_TOTAL) return;
    this.entries.set(id, { key, words, complete });
    this.chars += words.length;
  }

  /** The store wrote this conversation: its entry goes, and reads under way are not kept. */
  changed(id: string): void {
    this.generation++;
    this.forget(id);
  }

  /** Drops entries of conversations no longer listed (deleted, here or by another process). */
  keepOnly(ids: ReadonlySet<string>): void {
    for (const id of [...this.entries.keys()]) if (!ids.has(id)) this.forget(id);
  }

  private forget(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.chars -= entry.words.length;
    this.entries.delete(id);
  }
}
