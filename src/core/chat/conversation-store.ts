/**
 * Conversations under ".krypton/chat/", built so that several processes (the plugin, `krypton chat`, ten
 * parallel `krypton ask --conversation X`) can add to one conversation without losing a message:
 *
 *   chat/<id>.json          the head: id, title, times (files from before records also hold the messages)
 *   chat/<id>/<msgId>.json  one record per message, written atomically by the writer that owns the message
 *   chat/index.json         summaries for the history list, so listing never reads every conversation
 *
 * No writer rewrites another's message: appending creates a new record file, and updating a message (an
 * answer saved while it streams) replaces only its own record. The one exception is a note renamed in
 * Obsidian (followNoteRename): finished messages citing it get its new path; one still being written is
 * left to its writer. Reading merges the head's messages (an old
 * single-file conversation loads as it is: that is the migration) with the records, each answer placed
 * right after the question it answers. Within one process, writes go through one SerialQueue so the head
 * and the index are never written by two tasks at once. Obsidian's adapter has no exclusive create, so
 * this needs no lock at all.
 *
 * A corrupt head or record is skipped, reported through problems() and left on disk untouched; a corrupt
 * or missing index is rebuilt from the conversation files.
 *
 * search() keeps each conversation's words in memory (ConversationSearchCache) and re-reads only the
 * conversations whose files changed since, here or in another process.
 */
import type { Clock } from "../ports/clock";
import type { DataDirPort } from "../ports/data-dir";
import type { Logger } from "../ports/logger";
import { errorMessage } from "../util/errors";
import { SerialQueue } from "../util/serial-queue";
import { clip, cutAt } from "../util/text";
import { mayCite, renameCitations, type NoteRename } from "./citation-renames";
import { ConversationSearchCache } from "./conversation-search-cache";
import { isSafeId, newId } from "./ids";
import type { Conversation, ConversationStoreApi, ConversationSummary, StoredMessage } from "./conversation-types";
import { dropUnreadableParts } from "./stored-message-parts";

export const CHAT_DIR = "chat";
export const INDEX_FILE = `${CHAT_DIR}/index.json`;
export const NEW_CONVERSATION_TITLE = "New conversation";
const TITLE_CHARS = 60;
const SUMMARY_CHARS = 120;

interface IndexFile {
  version: 1;
  conversations: ConversationSummary[];
  /** Record files per conversation when its summary was made: a different count on disk means another process wrote. */
  records?: Record<string, number>;
}

/** What index.json holds in memory. */
interface Summaries {
  list: Map<string, ConversationSummary>;
  records: Map<string, number>;
}

/** "How do I set up Ollama?\nMore…" → "How do I set up Ollama?" (one line, at most 60 characters). */
export function titleFrom(message: string): string {
  const line = message.trim().split("\n").find((l) => l.trim())?.trim() ?? "";
  const flat = line.replace(/\s+/g, " ");
  if (!flat) return NEW_CONVERSATION_TITLE;
  return flat.length > TITLE_CHARS ? `${cutAt(flat, TITLE_CHARS - 1).trimEnd()}…` : flat;
}

function summarize(conversation: Conversation): ConversationSummary {
  const first = conversation.messages.find((m) => m.role === "user") ?? conversation.messages[0];
  const flat = (first?.content ?? "").replace(/\s+/g, " ").trim();
  return {
    id: conversation.id,
    title: conversation.title,
    updatedAt: conversation.updatedAt,
    summary: clip(flat, SUMMARY_CHARS),
    messageCount: conversation.messages.length,
  };
}

function isMessage(value: unknown): value is StoredMessage {
  const m = value as StoredMessage;
  return (
    typeof m === "object" &&
    m !== null &&
    typeof m.id === "string" &&
    (m.role === "user" || m.role === "assistant") &&
    typeof m.content === "string" &&
    typeof m.createdAt === "number"
  );
}

function parseConversation(text: string): Conversation {
  const value = JSON.parse(text) as Conversation;
  if (
    typeof value !== "object" ||
    value === null ||
    typeof value.id !== "string" ||
    typeof value.title !== "string" ||
    typeof value.createdAt !== "number" ||
    typeof value.updatedAt !== "number" ||
    !Array.isArray(value.messages) ||
    !value.messages.every(isMessage)
  ) {
    throw new Error("not a Krypton conversation");
  }
  for (const m of value.messages) dropUnreadableParts(m);
  return value;
}

function parseRecord(text: string): StoredMessage {
  const value = JSON.parse(text) as unknown;
  if (!isMessage(value)) throw new Error("not a Krypton message");
  return dropUnreadableParts(value);
}

function parseIndex(text: string): Summaries {
  const value = JSON.parse(text) as IndexFile;
  if (typeof value !== "object" || value === null || !Array.isArray(value.conversations)) throw new Error("not a conversation index");
  const ok = value.conversations.every(
    (s) => typeof s?.id === "string" && isSafeId(s.id) && typeof s.title === "string" && typeof s.updatedAt === "number",
  );
  if (!ok) throw new Error("not a conversation index");
  const list = new Map<string, ConversationSummary>();
  for (const s of value.conversations) {
    list.set(s.id, {
      id: s.id,
      title: s.title,
      updatedAt: s.updatedAt,
      summary: typeof s.summary === "string" ? s.summary : "",
      messageCount: typeof s.messageCount === "number" ? s.messageCount : 0,
    });
  }
  const records = new Map<string, number>();
  if (typeof value.records === "object" && value.records !== null) {
    for (const [id, n] of Object.entries(value.records)) if (typeof n === "number") records.set(id, n);
  }
  return { list, records };
}

function reason(err: unknown): string {
  return err instanceof SyntaxError ? "not valid JSON" : errorMessage(err);
}

const headPath = (id: string) => `${CHAT_DIR}/${id}.json`;
const recordDir = (id: string) => `${CHAT_DIR}/${id}`;
const recordPath = (id: string, messageId: string) => `${CHAT_DIR}/${id}/${messageId}.json`;
/** Record file names (temp files of a write cut short are not records). */
const isRecordName = (name: string) => name.endsWith(".json") && isSafeId(name.slice(0, -".json".length));

/**
 * One message list from the head's messages (in their order) and the records (by time), each answer
 * moved right after the question it answers: ten processes asking at once give ten question-answer pairs.
 */
export function mergeMessages(base: StoredMessage[], records: StoredMessage[]): StoredMessage[] {
  const byId = new Map(records.map((m) => [m.id, m]));
  const merged = base.map((m) => byId.get(m.id) ?? m);
  const inBase = new Set(base.map((m) => m.id));
  const added = records.filter((m) => !inBase.has(m.id)).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const all = [...merged, ...added];
  const ids = new Set(all.map((m) => m.id));
  const answers = new Map<string, StoredMessage[]>();
  const out: StoredMessage[] = [];
  for (const m of added) {
    if (m.role === "assistant" && m.replyTo && m.replyTo !== m.id && ids.has(m.replyTo)) {
      const list = answers.get(m.replyTo) ?? [];
      list.push(m);
      answers.set(m.replyTo, list);
    }
  }
  const placed = new Set([...answers.values()].flat().map((m) => m.id));
  for (const m of all) {
    if (placed.has(m.id)) continue;
    out.push(m);
    for (const a of answers.get(m.id) ?? []) out.push(a);
  }
  return out;
}

export class ConversationStore implements ConversationStoreApi {
  private loading: Promise<Summaries> | null = null;
  private readonly reported = new Set<string>();
  private readonly problemList: string[] = [];
  /** Conversation files found corrupt while listing: skipped (and left on disk) for this session. */
  private readonly unreadable = new Set<string>();
  /** Head and index writes run one at a time within this process. */
  private readonly queue = new SerialQueue();
  /** Note renames not yet taken by a pass over the conversations (see followNoteRename). */
  private gathering: { renames: NoteRename[]; done: Promise<void> } | null = null;
  /** Passes one after another, so renames apply in the order they happened (A→B, then B→C). */
  private readonly renamePasses = new SerialQueue();
  private readonly searchCache = new ConversationSearchCache();

  constructor(
    private readonly data: DataDirPort,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * Newest first. The index is checked against the folder first: the plugin and `krypton` processes
   * write the same folder, and a later index write can miss another process's conversation or message;
   * the files are the truth, so the list (and the index) follow them.
   */
  list(): Promise<ConversationSummary[]> {
    return this.queue.run(async () => {
      const summaries = await this.load();
      if (await this.reconcile(summaries)) await this.writeIndex(summaries);
      return [...summaries.list.values()].sort((a, b) => b.updatedAt - a.updatedAt);
    });
  }

  async get(id: string): Promise<Conversation | null> {
    return (await this.read(id))?.conversation ?? null;
  }

  create(title?: string): Promise<Conversation> {
    return this.queue.run(async () => {
      const now = this.clock.now();
      const conversation: Conversation = {
        id: newId("c", now),
        title: title?.trim() ? titleFrom(title) : NEW_CONVERSATION_TITLE,
        createdAt: now,
        updatedAt: now,
        messages: [],
      };
      await this.data.writeAtomic(headPath(conversation.id), JSON.stringify(conversation, null, 1));
      await this.updateIndex(conversation, 0);
      return conversation;
    });
  }

  put(conversationId: string, message: StoredMessage): Promise<void> {
    return this.writing(conversationId, async () => {
      if (!isSafeId(message.id)) throw new Error(`Message id ${message.id} is not valid.`);
      const head = await this.requireHead(conversationId);
      // The record first: once it is on disk the message is kept, whatever happens to the head or index.
      await this.data.writeAtomic(recordPath(conversationId, message.id), JSON.stringify(message));
      if (message.partial && !message.error) return; // still streaming: the list learns of it when the answer ends
      if (head.title === NEW_CONVERSATION_TITLE && message.role === "user") await this.writeHead({ ...head, title: titleFrom(message.content) });
      const read = await this.read(conversationId);
      if (read) await this.updateIndex(read.conversation, read.records);
    });
  }

  removeMessage(conversationId: string, messageId: string): Promise<void> {
    return this.writing(conversationId, async () => {
      const head = await this.requireHead(conversationId);
      if (isSafeId(messageId)) await this.data.remove(recordPath(conversationId, messageId));
      // A message from an old single-file conversation lives in the head.
      if (head.messages.some((m) => m.id === messageId)) {
        await this.writeHead({ ...head, messages: head.messages.filter((m) => m.id !== messageId) });
      }
      const read = await this.read(conversationId);
      if (read) await this.updateIndex(read.conversation, read.records);
    });
  }

  rename(id: string, title: string): Promise<void> {
    return this.writing(id, async () => {
      const head = await this.requireHead(id);
      const clean = title.replace(/\s+/g, " ").trim();
      await this.writeHead({ ...head, title: clean || NEW_CONVERSATION_TITLE });
      const read = await this.read(id);
      if (read) await this.updateIndex(read.conversation, read.records);
    });
  }

  delete(id: string): Promise<void> {
    return this.writing(id, async () => {
      if (!isSafeId(id)) return;
      await this.data.remove(headPath(id));
      for (const name of await this.data.list(recordDir(id))) await this.data.remove(`${recordDir(id)}/${name}`);
      const summaries = await this.load();
      if (summaries.list.delete(id)) await this.writeIndex(summaries);
    });
  }

  /**
   * Conversations whose title or any message contains the text (case-insensitive), newest first. Message
   * text comes from the search cache where the conversation's files have not changed since it was read.
   */
  async search(text: string): Promise<ConversationSummary[]> {
    const needle = text.trim().toLowerCase();
    const all = await this.list();
    if (!needle) return all;
    this.searchCache.keepOnly(new Set(all.map((s) => s.id)));
    const found: ConversationSummary[] = [];
    for (const summary of all) {
      if (summary.title.toLowerCase().includes(needle) || (await this.mentions(summary.id, needle))) found.push(summary);
    }
    return found;
  }

  problems(): string[] {
    return [...this.problemList];
  }

  /**
   * A note was renamed or moved: saved answers citing it get its new path. Renames that come together (a
   * renamed folder fires one per note) share one pass over the conversations. Each conversation is its own
   * turn on the queue, so a chat being saved never waits for the whole pass, and one file at a time is read.
   * The files keep their times: the history list's order does not change. `signal` (the host stopping) ends
   * the pass before its next conversation. Resolves when this rename's pass is done.
   */
  followNoteRename(rename: NoteRename, signal?: AbortSignal): Promise<void> {
    if (!this.gathering) {
      const renames: NoteRename[] = [];
      const done = this.renamePasses.run(async () => {
        this.gathering = null; // renames from now on wait for the next pass
        const heads = (await this.data.list(CHAT_DIR).catch(() => [])).filter((n) => n.endsWith(".json") && n !== "index.json");
        for (const id of heads.map((n) => n.slice(0, -".json".length)).filter(isSafeId)) {
          if (signal?.aborted) return;
          try {
            await this.queue.run(() => this.renameCitationsOf(id, renames));
          } catch (err) {
            this.logger.warn(`Could not update the citations of conversation ${id} after a rename: ${errorMessage(err)}`);
          }
        }
      });
      this.gathering = { renames, done };
    }
    this.gathering.renames.push(rename);
    return this.gathering.done;
  }

  /** Whether a message of the conversation contains the lower-cased needle: from the cache when its files are unchanged. */
  private async mentions(id: string, needle: string): Promise<boolean> {
    const scan = (messages: readonly StoredMessage[]) => messages.some((m) => m.content.toLowerCase().includes(needle));
    if (!isSafeId(id)) return false; // read() would not read it either
    const stamp = this.searchCache.stamp;
    // Head first, then the records: a change after either shows in the key at the next search.
    const [size, mtime] = await Promise.all([this.data.size(headPath(id)).catch(() => null), this.data.mtime(headPath(id)).catch(() => null)]);
    const head = { size, mtime };
    const names = (await this.data.list(recordDir(id)).catch(() => [])).filter(isRecordName);
    const key = ConversationSearchCache.key(head, names);
    const cached = this.searchCache.match(id, key, needle);
    if (cached !== "unknown") return cached === "yes";
    const read = await this.read(id);
    if (!read) return false;
    this.searchCache.fill(id, key, read.conversation.messages, stamp);
    return scan(read.conversation.messages);
  }

  /** A write to one conversation, on the queue; search forgets what it kept of it, before and after. */
  private writing(id: string, task: () => Promise<void>): Promise<void> {
    return this.queue.run(async () => {
      this.searchCache.changed(id);
      try {
        await task();
      } finally {
        this.searchCache.changed(id);
      }
    });
  }

  /** One conversation's head (an old single-file conversation keeps its messages there) and records. */
  private async renameCitationsOf(id: string, renames: readonly NoteRename[]): Promise<void> {
    await this.rewriteCiting(headPath(id), renames, (head) => {
      const messages = (head as { messages?: unknown } | null)?.messages;
      return Array.isArray(messages) && messages.map((m) => renameCitations(m, renames)).includes(true);
    }, (head) => JSON.stringify(head, null, 1));
    const names = (await this.data.list(recordDir(id)).catch(() => [])).filter(isRecordName);
    for (const name of names) await this.rewriteCiting(`${recordDir(id)}/${name}`, renames, (m) => renameCitations(m, renames), (m) => JSON.stringify(m));
  }

  /** Rewrites a file (atomically, in the store's own format) when `rename` changed it; a damaged one is left untouched. */
  private async rewriteCiting(path: string, renames: readonly NoteRename[], rename: (raw: unknown) => boolean, format: (raw: unknown) => string): Promise<void> {
    const text = await this.data.readText(path).catch(() => null);
    if (text === null || !mayCite(text, renames)) return;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return; // read() reports it; it stays as it is
    }
    if (rename(raw)) await this.data.writeAtomic(path, format(raw));
  }

  /** The conversation as head + records, and how many record files it has; null when the head is missing or unreadable. */
  private async read(id: string): Promise<{ conversation: Conversation; records: number } | null> {
    const head = await this.readHead(id);
    if (!head) return null;
    const names = (await this.data.list(recordDir(id)).catch(() => [])).filter(isRecordName);
    const records: StoredMessage[] = [];
    for (const name of names) {
      const path = `${recordDir(id)}/${name}`;
      try {
        const text = await this.data.readText(path);
        if (text !== null) records.push(parseRecord(text));
      } catch (err) {
        this.report(path, reason(err));
      }
    }
    const messages = mergeMessages(head.messages, records);
    const updatedAt = Math.max(head.updatedAt, ...records.map((m) => m.createdAt));
    return { conversation: { ...head, updatedAt, messages }, records: names.length };
  }

  private async readHead(id: string): Promise<Conversation | null> {
    if (!isSafeId(id)) return null;
    const path = headPath(id);
    let text: string | null;
    try {
      text = await this.data.readText(path);
    } catch (err) {
      this.report(path, reason(err));
      return null;
    }
    if (text === null) return null;
    try {
      return parseConversation(text);
    } catch (err) {
      this.report(path, reason(err));
      return null;
    }
  }

  private async requireHead(id: string): Promise<Conversation> {
    const head = await this.readHead(id);
    if (!head) throw new Error(`Conversation ${id} does not exist or cannot be read.`);
    return head;
  }

  private async writeHead(head: Conversation): Promise<void> {
    await this.data.writeAtomic(headPath(head.id), JSON.stringify({ ...head, updatedAt: this.clock.now() }, null, 1));
  }

  /**
   * Adds conversations missing from the index, drops entries whose head is gone and re-reads those whose
   * record count changed (another process added a message); true when anything changed.
   */
  private async reconcile(summaries: Summaries): Promise<boolean> {
    let names: string[];
    try {
      names = await this.data.list(CHAT_DIR);
    } catch {
      return false;
    }
    const onDisk = new Set(names.filter((n) => n.endsWith(".json") && n !== "index.json").map((n) => n.slice(0, -".json".length)));
    let changed = false;
    for (const id of [...summaries.list.keys()]) {
      if (!onDisk.has(id)) changed = summaries.list.delete(id) || changed;
    }
    for (const id of onDisk) {
      if (this.unreadable.has(id) || !isSafeId(id)) continue;
      if (summaries.list.has(id)) {
        const count = (await this.data.list(recordDir(id)).catch(() => [])).filter(isRecordName).length;
        if (count === (summaries.records.get(id) ?? 0)) continue;
      }
      const read = await this.read(id);
      if (read && read.conversation.id === id) {
        summaries.list.set(id, summarize(read.conversation));
        summaries.records.set(id, read.records);
        changed = true;
      } else if (!summaries.list.has(id)) {
        this.unreadable.add(id); // reported by readHead(); not read again on every listing
      }
    }
    return changed;
  }

  private report(path: string, why: string): void {
    const message = `.krypton/${path} could not be read (${why}); it was skipped and left untouched.`;
    if (this.reported.has(message)) return;
    this.reported.add(message);
    this.problemList.push(message);
    this.logger.warn(message);
  }

  private async updateIndex(conversation: Conversation, records: number): Promise<void> {
    const summaries = await this.load();
    summaries.list.set(conversation.id, summarize(conversation));
    summaries.records.set(conversation.id, records);
    await this.writeIndex(summaries);
  }

  private async writeIndex(summaries: Summaries): Promise<void> {
    const records: Record<string, number> = {};
    for (const id of summaries.list.keys()) records[id] = summaries.records.get(id) ?? 0;
    const file: IndexFile = { version: 1, conversations: [...summaries.list.values()], records };
    await this.data.writeAtomic(INDEX_FILE, JSON.stringify(file));
  }

  /**
   * The index as it is on disk now (not a long-lived cache): other processes write to the same vault,
   * and re-reading one small file per operation keeps this one from dropping their conversations.
   */
  private load(): Promise<Summaries> {
    this.loading ??= this.readOrRebuildIndex().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async readOrRebuildIndex(): Promise<Summaries> {
    let text: string | null = null;
    try {
      text = await this.data.readText(INDEX_FILE);
    } catch (err) {
      this.logger.warn("Could not read the conversation index; rebuilding it", { error: reason(err) });
    }
    if (text !== null) {
      try {
        return parseIndex(text);
      } catch (err) {
        const message = `.krypton/${INDEX_FILE} was unreadable (${reason(err)}) and was rebuilt from the conversation files.`;
        this.problemList.push(message);
        this.logger.warn(message);
      }
    }
    const summaries: Summaries = { list: new Map(), records: new Map() };
    const names = await this.data.list(CHAT_DIR);
    for (const name of names) {
      if (!name.endsWith(".json") || name === "index.json") continue;
      const id = name.slice(0, -".json".length);
      const read = await this.read(id);
      if (read && read.conversation.id === id) {
        summaries.list.set(id, summarize(read.conversation));
        summaries.records.set(id, read.records);
      }
    }
    if (names.length > 0) await this.writeIndex(summaries);
    return summaries;
  }
}
