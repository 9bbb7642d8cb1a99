/**
 * Conversations under ".krypton/chat/": one "<id>.json" per conversation plus "index.json" (id, title,
 * updated time, summary, message count) so the history list never reads every file. Writes are atomic
 * and serialized. A corrupt conversation file is skipped, reported through problems() and left on disk
 * untouched; a corrupt or missing index is rebuilt from the conversation files.
 */
import type { Clock } from "../ports/clock";
import type { DataDirPort } from "../ports/data-dir";
import type { Logger } from "../ports/logger";
import { isSafeId, newId } from "./ids";
import type { Conversation, ConversationStoreApi, ConversationSummary, StoredMessage } from "./conversation-types";
import { errorMessage } from "../util/errors";
import { SerialQueue } from "../util/serial-queue";

export const CHAT_DIR = "chat";
export const INDEX_FILE = `${CHAT_DIR}/index.json`;
export const NEW_CONVERSATION_TITLE = "New conversation";
const TITLE_CHARS = 60;
const SUMMARY_CHARS = 120;

interface IndexFile {
  version: 1;
  conversations: ConversationSummary[];
}

/** "How do I set up Ollama?\nMore…" → "How do I set up Ollama?" (one line, at most 60 characters). */
export function titleFrom(message: string): string {
  const line = message.trim().split("\n").find((l) => l.trim())?.trim() ?? "";
  const flat = line.replace(/\s+/g, " ");
  if (!flat) return NEW_CONVERSATION_TITLE;
  return flat.length > TITLE_CHARS ? `${flat.slice(0, TITLE_CHARS - 1).trimEnd()}…` : flat;
}

function summarize(conversation: Conversation): ConversationSummary {
  const first = conversation.messages.find((m) => m.role === "user") ?? conversation.messages[0];
  const flat = (first?.content ?? "").replace(/\s+/g, " ").trim();
  return {
    id: conversation.id,
    title: conversation.title,
    updatedAt: conversation.updatedAt,
    summary: flat.length > SUMMARY_CHARS ? `${flat.slice(0, SUMMARY_CHARS - 1)}…` : flat,
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
  // Optional parts that are unreadable are dropped, not the conversation (steps: agent mode, newer files).
  for (const m of value.messages) if (m.steps !== undefined && !Array.isArray(m.steps)) delete m.steps;
  return value;
}

function parseIndex(text: string): ConversationSummary[] {
  const value = JSON.parse(text) as IndexFile;
  if (typeof value !== "object" || value === null || !Array.isArray(value.conversations)) throw new Error("not a conversation index");
  const ok = value.conversations.every(
    (s) => typeof s?.id === "string" && isSafeId(s.id) && typeof s.title === "string" && typeof s.updatedAt === "number",
  );
  if (!ok) throw new Error("not a conversation index");
  return value.conversations.map((s) => ({
    id: s.id,
    title: s.title,
    updatedAt: s.updatedAt,
    summary: typeof s.summary === "string" ? s.summary : "",
    messageCount: typeof s.messageCount === "number" ? s.messageCount : 0,
  }));
}

function reason(err: unknown): string {
  return err instanceof SyntaxError ? "not valid JSON" : errorMessage(err);
}

export class ConversationStore implements ConversationStoreApi {
  private loading: Promise<Map<string, ConversationSummary>> | null = null;
  private readonly reported = new Set<string>();
  private readonly problemList: string[] = [];
  /** Conversation files found corrupt while listing: skipped (and left on disk) for this session. */
  private readonly unreadable = new Set<string>();
  /** Mutations run one at a time, so two quick puts never lose each other's message. */
  private readonly writes = new SerialQueue();

  constructor(
    private readonly data: DataDirPort,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * Newest first. The index is checked against the folder first: when the plugin and `krypton chat`
   * save at the same moment, the later index write can miss the other's conversation (or bring back a
   * deleted one); the files are the truth, so the list (and the index) follow them.
   */
  list(): Promise<ConversationSummary[]> {
    return this.exclusive(async () => {
      const summaries = await this.load();
      if (await this.reconcile(summaries)) await this.writeIndex(summaries);
      return [...summaries.values()].sort((a, b) => b.updatedAt - a.updatedAt);
    });
  }

  async get(id: string): Promise<Conversation | null> {
    if (!isSafeId(id)) return null;
    const path = `${CHAT_DIR}/${id}.json`;
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

  create(title?: string): Promise<Conversation> {
    return this.exclusive(async () => {
      const now = this.clock.now();
      const conversation: Conversation = {
        id: newId("c", now),
        title: title?.trim() ? titleFrom(title) : NEW_CONVERSATION_TITLE,
        createdAt: now,
        updatedAt: now,
        messages: [],
      };
      await this.save(conversation);
      return conversation;
    });
  }

  put(conversationId: string, message: StoredMessage): Promise<void> {
    return this.exclusive(async () => {
      const conversation = await this.require(conversationId);
      const at = conversation.messages.findIndex((m) => m.id === message.id);
      if (at >= 0) conversation.messages[at] = message;
      else conversation.messages.push(message);
      if (conversation.title === NEW_CONVERSATION_TITLE && message.role === "user") conversation.title = titleFrom(message.content);
      conversation.updatedAt = this.clock.now();
      await this.save(conversation);
    });
  }

  removeMessage(conversationId: string, messageId: string): Promise<void> {
    return this.exclusive(async () => {
      const conversation = await this.require(conversationId);
      const before = conversation.messages.length;
      conversation.messages = conversation.messages.filter((m) => m.id !== messageId);
      if (conversation.messages.length === before) return;
      conversation.updatedAt = this.clock.now();
      await this.save(conversation);
    });
  }

  rename(id: string, title: string): Promise<void> {
    return this.exclusive(async () => {
      const conversation = await this.require(id);
      const clean = title.replace(/\s+/g, " ").trim();
      conversation.title = clean || NEW_CONVERSATION_TITLE;
      conversation.updatedAt = this.clock.now();
      await this.save(conversation);
    });
  }

  delete(id: string): Promise<void> {
    return this.exclusive(async () => {
      if (!isSafeId(id)) return;
      await this.data.remove(`${CHAT_DIR}/${id}.json`);
      const summaries = await this.load();
      if (summaries.delete(id)) await this.writeIndex(summaries);
    });
  }

  /** Conversations whose title or any message contains the text (case-insensitive), newest first. */
  async search(text: string): Promise<ConversationSummary[]> {
    const needle = text.trim().toLowerCase();
    const all = await this.list();
    if (!needle) return all;
    const found: ConversationSummary[] = [];
    for (const summary of all) {
      if (summary.title.toLowerCase().includes(needle)) {
        found.push(summary);
        continue;
      }
      const conversation = await this.get(summary.id);
      if (conversation?.messages.some((m) => m.content.toLowerCase().includes(needle))) found.push(summary);
    }
    return found;
  }

  /** Adds conversation files missing from the index and drops entries whose file is gone; true when it changed. */
  private async reconcile(summaries: Map<string, ConversationSummary>): Promise<boolean> {
    let names: string[];
    try {
      names = await this.data.list(CHAT_DIR);
    } catch {
      return false;
    }
    const onDisk = new Set(names.filter((n) => n.endsWith(".json") && n !== "index.json").map((n) => n.slice(0, -".json".length)));
    let changed = false;
    for (const id of [...summaries.keys()]) {
      if (!onDisk.has(id)) changed = summaries.delete(id) || changed;
    }
    for (const id of onDisk) {
      if (summaries.has(id) || this.unreadable.has(id) || !isSafeId(id)) continue;
      const conversation = await this.get(id);
      if (conversation && conversation.id === id) {
        summaries.set(id, summarize(conversation));
        changed = true;
      } else {
        this.unreadable.add(id); // reported by get(); not read again on every listing
      }
    }
    return changed;
  }

  problems(): string[] {
    return [...this.problemList];
  }

  private report(path: string, why: string): void {
    const message = `.krypton/${path} could not be read (${why}); it was skipped and left untouched.`;
    if (this.reported.has(message)) return;
    this.reported.add(message);
    this.problemList.push(message);
    this.logger.warn(message);
  }

  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.writes.run(task);
  }

  private async require(id: string): Promise<Conversation> {
    const conversation = await this.get(id);
    if (!conversation) throw new Error(`Conversation ${id} does not exist or cannot be read.`);
    return conversation;
  }

  private async save(conversation: Conversation): Promise<void> {
    await this.data.writeAtomic(`${CHAT_DIR}/${conversation.id}.json`, JSON.stringify(conversation, null, 1));
    const summaries = await this.load();
    summaries.set(conversation.id, summarize(conversation));
    await this.writeIndex(summaries);
  }

  private async writeIndex(summaries: Map<string, ConversationSummary>): Promise<void> {
    const file: IndexFile = { version: 1, conversations: [...summaries.values()] };
    await this.data.writeAtomic(INDEX_FILE, JSON.stringify(file));
  }

  /**
   * The index as it is on disk now (not a long-lived cache): the plugin and `krypton chat` may both write
   * to the same vault, and re-reading one small file per operation keeps either from dropping the
   * other's conversations from the list.
   */
  private load(): Promise<Map<string, ConversationSummary>> {
    this.loading ??= this.readOrRebuildIndex().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async readOrRebuildIndex(): Promise<Map<string, ConversationSummary>> {
    let text: string | null = null;
    try {
      text = await this.data.readText(INDEX_FILE);
    } catch (err) {
      this.logger.warn("Could not read the conversation index; rebuilding it", { error: reason(err) });
    }
    if (text !== null) {
      try {
        return new Map(parseIndex(text).map((s) => [s.id, s]));
      } catch (err) {
        const message = `.krypton/${INDEX_FILE} was unreadable (${reason(err)}) and was rebuilt from the conversation files.`;
        this.problemList.push(message);
        this.logger.warn(message);
      }
    }
    const map = new Map<string, ConversationSummary>();
    const names = await this.data.list(CHAT_DIR);
    for (const name of names) {
      if (!name.endsWith(".json") || name === "index.json") continue;
      const id = name.slice(0, -".json".length);
      const conversation = await this.get(id);
      if (conversation && conversation.id === id) map.set(id, summarize(conversation));
    }
    if (names.length > 0) await this.writeIndex(map);
    return map;
  }
}
