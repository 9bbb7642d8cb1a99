// Test fixture for the chat view under jsdom: a scripted ChatServiceApi (the contract the real
// ChatService implements), an in-memory conversation store, a recording ChatViewContext, a manual frame
// scheduler, and a mounted KryptonChatView inside a stand-in WorkspaceLeaf.
import type { AgentResult } from "../../../src/core/agents/agent";
import type { ChatEvent, ChatServiceApi, SendOptions } from "../../../src/core/chat/chat-types";
import type { Conversation, ConversationStoreApi, ConversationSummary, StoredMessage } from "../../../src/core/chat/conversation-types";
import { renameCitations, type NoteRename } from "../../../src/core/chat/citation-renames";
import type { IndexStatus } from "../../../src/core/indexing/index-status";
import type { KryptonCore } from "../../../src/core/krypton";
import { NoteExistsError, NoteNotFoundError, type VaultPort } from "../../../src/core/ports/vault";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../../src/core/settings";
import type { ChatViewContext } from "../../../src/obsidian/chat-view/chat-view-context";
import { KryptonChatView } from "../../../src/obsidian/chat-view/chat-view";
import { WorkspaceLeaf } from "../../support/obsidian-stub/workspace";
import type { ConfirmDecision, ConfirmRequest } from "../../../src/core/agent-loop/agent-types";
import { AgentService } from "../../../src/core/agent-loop/agent-service";
import { ToolRegistry } from "../../../src/core/tools/tool-registry";
import { registerAgentTools } from "../../../src/core/tools/agent-tools";
import { nodeClock } from "../../../src/node/node-clock";
import type { Host } from "../../../src/core/ports/host";
import type { ChatModel } from "../../../src/core/ports/chat-model";

/** Frames run only when the test says so: proves batching without timing. */
export class ManualFrames {
  private pending: (() => void)[] = [];
  readonly schedule = (cb: () => void) => {
    this.pending.push(cb);
    return () => {
      this.pending = this.pending.filter((x) => x !== cb);
    };
  };
  get count(): number {
    return this.pending.length;
  }
  run(): void {
    const now = this.pending.splice(0);
    for (const cb of now) cb();
  }
}

/** Timers that fire only when the test says so (the history search delay): proves debouncing without timing. */
export class ManualDelays {
  private pending: { fn: () => void; ms: number }[] = [];
  readonly requested: number[] = [];
  readonly schedule = (fn: () => void, ms: number) => {
    const entry = { fn, ms };
    this.pending.push(entry);
    this.requested.push(ms);
    return () => {
      this.pending = this.pending.filter((x) => x !== entry);
    };
  };
  get count(): number {
    return this.pending.length;
  }
  run(): void {
    const now = this.pending.splice(0);
    for (const e of now) e.fn();
  }
}

/** A latch a script waits on, released by the test. */
export class Gate {
  private resolveFn!: () => void;
  readonly promise = new Promise<void>((r) => (this.resolveFn = r));
  open(): void {
    this.resolveFn();
  }
}

export type ScriptStep =
  | ChatEvent
  | { gate: Gate }
  | { waitForAbort: true }
  | { throws: Error }
  /** Agent mode: asks SendOptions.confirm like the agent loop does; the answer goes to `decided`. */
  | { confirm: ConfirmRequest; decided: ConfirmDecision[] };

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** In-memory ConversationStoreApi with the documented semantics (put replaces same id, list by update). */
export class MemoryConversations implements ConversationStoreApi {
  readonly convs = new Map<string, Conversation>();
  private clock = 1_700_000_000_000;
  private ids = 0;
  broken: string[] = [];

  async list(): Promise<ConversationSummary[]> {
    return [...this.convs.values()].map((c) => ({
      id: c.id,
      title: c.title,
      updatedAt: c.updatedAt,
      summary: c.messages[0]?.content.slice(0, 60) ?? "",
      messageCount: c.messages.length,
    }));
  }
  async get(id: string): Promise<Conversation | null> {
    const c = this.convs.get(id);
    return c ? clone(c) : null;
  }
  async create(title?: string): Promise<Conversation> {
    const now = this.tick();
    const c: Conversation = { id: `c${++this.ids}`, title: title ?? "New chat", createdAt: now, updatedAt: now, messages: [] };
    this.convs.set(c.id, c);
    return clone(c);
  }
  async put(conversationId: string, message: StoredMessage): Promise<void> {
    const c = this.convs.get(conversationId);
    if (!c) throw new Error(`no conversation ${conversationId}`);
    const i = c.messages.findIndex((m) => m.id === message.id);
    if (i >= 0) c.messages[i] = clone(message);
    else c.messages.push(clone(message));
    if (c.title === "New chat" && message.role === "user") c.title = message.content.slice(0, 40);
    c.updatedAt = this.tick();
  }
  async removeMessage(conversationId: string, messageId: string): Promise<void> {
    const c = this.convs.get(conversationId);
    if (c) c.messages = c.messages.filter((m) => m.id !== messageId);
  }
  async rename(id: string, title: string): Promise<void> {
    const c = this.convs.get(id);
    if (c) c.title = title;
  }
  async delete(id: string): Promise<void> {
    this.convs.delete(id);
  }
  async search(text: string): Promise<ConversationSummary[]> {
    const q = text.toLowerCase();
    return (await this.list()).filter((s) => {
      const c = this.convs.get(s.id) as Conversation;
      return c.title.toLowerCase().includes(q) || c.messages.some((m) => m.content.toLowerCase().includes(q));
    });
  }
  problems(): string[] {
    return this.broken;
  }
  async followNoteRename(rename: NoteRename): Promise<void> {
    for (const c of this.convs.values()) for (const m of c.messages) renameCitations(m, [rename]);
  }
  private tick(): number {
    return (this.clock += 60_000);
  }
}

/**
 * Plays scripted events per send() and saves the exchange in the store the way ChatService does
 * (user question, then the answer with sources/stopped/error), so history and ids behave as in real use.
 */
export class ScriptedChat implements ChatServiceApi {
  readonly calls: { message: string; options: SendOptions }[] = [];
  private scripts: ScriptStep[][] = [];

  constructor(private readonly store: ConversationStoreApi) {}

  script(...steps: ScriptStep[]): void {
    this.scripts.push(steps);
  }

  async *send(message: string, options: SendOptions): AsyncIterable<ChatEvent> {
    this.calls.push({ message, options });
    const steps = this.scripts.shift() ?? [{ type: "token", text: "ok" }];
    const conv = options.conversationId ? await this.store.get(options.conversationId) : await this.store.create();
    if (!conv) throw new Error("unknown conversation");
    if (options.regenerate) {
      const last = conv.messages[conv.messages.length - 1];
      if (last?.role === "assistant") await this.store.removeMessage(conv.id, last.id);
    } else {
      await this.store.put(conv.id, { id: `u${this.calls.length}`, role: "user", content: message, createdAt: 0 });
    }
    const answer: StoredMessage = { id: `a${this.calls.length}`, role: "assistant", content: "", createdAt: 0 };
    let stopped = false;
    for (const step of steps) {
      if ("gate" in step) await step.gate.promise;
      else if ("waitForAbort" in step) {
        await new Promise<void>((resolve) => {
          if (options.signal?.aborted) resolve();
          options.signal?.addEventListener("abort", () => resolve(), { once: true });
        });
      } else if ("throws" in step) throw step.throws;
      else if ("confirm" in step) {
        step.decided.push(options.confirm ? await options.confirm(step.confirm, options.signal) : "deny");
      }
      else {
        if (step.type === "token") answer.content += step.text;
        if (step.type === "retract") answer.content = answer.content.slice(0, answer.content.length - step.text.length);
        if (step.type === "sources") answer.sources = step.sources;
        if (step.type === "agent") {
          answer.agent = step.result;
          answer.content = step.result.text;
        }
        if (step.type === "error") answer.error = step.message;
        yield step;
      }
      if (options.signal?.aborted) {
        stopped = true;
        break;
      }
    }
    answer.stopped = stopped || undefined;
    // As ChatService: an answer of only whitespace is no answer, saved and reported as "".
    if (!answer.content.trim()) answer.content = "";
    await this.store.put(conv.id, answer);
    yield { type: "done", conversationId: conv.id, messageId: answer.id, answer: answer.content, stopped };
  }
}

export class MemoryVault implements VaultPort {
  readonly files = new Map<string, string>();
  readonly configDir = ".obsidian";
  async listNotes() {
    return [...this.files.keys()].map((path) => ({ path, mtime: 0, size: 0 }));
  }
  /** A memory vault has folders only as the paths of its files. */
  async listFolders(parent: string): Promise<string[]> {
    const prefix = parent ? `${parent}/` : "";
    const below = [...this.files.keys()].filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length).split("/"));
    return [...new Set(below.filter((levels) => levels.length > 1).map((levels) => levels[0]))];
  }
  async readNote(path: string): Promise<string> {
    const f = this.files.get(path);
    if (f === undefined) throw new Error(`missing ${path}`);
    return f;
  }
  async exists(path: string): Promise<boolean> {
    return this.files.has(path);
  }
  async createNote(path: string, content: string): Promise<void> {
    if (this.files.has(path)) throw new NoteExistsError(path);
    this.files.set(path, content);
  }
  async appendToNote(path: string, text: string): Promise<void> {
    const content = this.files.get(path);
    if (content === undefined) throw new NoteNotFoundError(path);
    this.files.set(path, content + text);
  }
  async processNote(path: string, fn: (current: string) => string): Promise<void> {
    const content = this.files.get(path);
    if (content === undefined) throw new NoteNotFoundError(path);
    this.files.set(path, fn(content));
  }
  async readConfigFile(): Promise<string | null> {
    return null;
  }
  onChange() {
    return () => {};
  }
}

export function readyStatus(overrides: Partial<IndexStatus> = {}): IndexStatus {
  return { state: "ready", notes: 3, chunks: 9, embedded: 9, keywordOnly: false, embedder: "hash", failures: [], ...overrides };
}

export interface Fixture {
  view: KryptonChatView;
  leaf: WorkspaceLeaf;
  root: HTMLElement;
  frames: ManualFrames;
  /** The history search's delay timer. */
  delays: ManualDelays;
  chat: ScriptedChat;
  store: ConversationStoreApi;
  vault: MemoryVault;
  context: ChatViewContext & { calls: Record<string, unknown[][]> };
  settings: KryptonSettings;
  setIndexStatus(status: IndexStatus): void;
  setChatModel(present: boolean): void;
  changeSettings(patch: Partial<KryptonSettings>): void;
  /** Lets every pending promise run and every frame render, repeatedly, until the view is settled. */
  settle(): Promise<void>;
  close(): Promise<void>;
  $(selector: string): HTMLElement;
  $$(selector: string): HTMLElement[];
}

export async function mountChatView(
  options: {
    settings?: Partial<KryptonSettings>;
    noModel?: boolean;
    activeNote?: string;
    store?: ConversationStoreApi;
    mobile?: boolean;
    /** The model agent mode thinks with (a real provider, for /log); without it, a stand-in that only has an id. */
    agentModel?: ChatModel;
  } = {},
): Promise<Fixture> {
  const store = options.store ?? new MemoryConversations();
  const chat = new ScriptedChat(store);
  const vault = new MemoryVault();
  let settings: KryptonSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  let hasModel = !options.noModel;
  let status = readyStatus();
  const statusListeners = new Set<(s: IndexStatus) => void>();
  const settingsListeners = new Set<() => void>();

  const core = {
    host: { vault },
    settings: () => settings,
    applySettings: (next: KryptonSettings) => (settings = next),
    index: {
      status: () => status,
      onStatus: (l: (s: IndexStatus) => void) => {
        statusListeners.add(l);
        return () => statusListeners.delete(l);
      },
    },
    chat,
    conversations: store,
    chatModel: () => (hasModel ? { id: `ollama:${settings.chatModel}` } : null),
  } as unknown as KryptonCore;
  // The real agent service over the real registry (for /tools, /config, /steps); the chat itself is scripted.
  const registry = new ToolRegistry();
  registerAgentTools(registry, { vault, clock: nodeClock, settings: () => settings, webSearch: () => null });
  const agentHost = { vault, clock: nodeClock, platform: { kind: "obsidian", mobile: false } } as unknown as Host;
  (core as { agent: AgentService }).agent = new AgentService({ host: agentHost, settings: () => settings, registry, chatModel: () => options.agentModel ?? core.chatModel() });

  const calls: Record<string, unknown[][]> = {};
  const record =
    (name: string, ret?: unknown) =>
    (...args: unknown[]) => {
      (calls[name] ??= []).push(args);
      return ret;
    };
  const context: Fixture["context"] = {
    core,
    calls,
    openSettings: record("openSettings"),
    openNote: record("openNote") as ChatViewContext["openNote"],
    openLinkText: record("openLinkText") as ChatViewContext["openLinkText"],
    openUrl: record("openUrl"),
    insertAtCursor: record("insertAtCursor", true) as (text: string) => boolean,
    activeNotePath: () => options.activeNote,
    notify: record("notify"),
    saveSettings: async (patch) => {
      record("saveSettings")(patch);
      settings = { ...settings, ...patch };
      for (const l of settingsListeners) l();
    },
    listChatModels: async () => ["llama3.1:8b", "qwen2.5:7b"],
    onSettingsChange: (l) => {
      settingsListeners.add(l);
      return () => settingsListeners.delete(l);
    },
    onNoteRenamed: () => () => undefined, // no vault renames here: the plugin test (renamed-citation) has them
  };

  const frames = new ManualFrames();
  const delays = new ManualDelays();
  const leaf = new WorkspaceLeaf({});
  document.body.appendChild(leaf.containerEl);
  const view = new KryptonChatView(leaf as never, context, { schedule: frames.schedule, historySearchDelay: delays.schedule, mobile: options.mobile });
  await leaf.open(view as never);
  const root = view.contentEl;

  const settle = async () => {
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 0));
      frames.run();
      await view.settled();
    }
  };

  return {
    view,
    leaf,
    root,
    frames,
    delays,
    chat,
    store,
    vault,
    context,
    get settings() {
      return settings;
    },
    setIndexStatus(s) {
      status = s;
      for (const l of statusListeners) l(s);
    },
    setChatModel(present) {
      hasModel = present;
      for (const l of settingsListeners) l();
    },
    changeSettings(patch) {
      settings = { ...settings, ...patch };
      for (const l of settingsListeners) l();
    },
    settle,
    close: async () => {
      await leaf.detach();
    },
    $: (sel) => {
      const el = root.querySelector<HTMLElement>(sel);
      if (!el) throw new Error(`no element matches ${sel}`);
      return el;
    },
    $$: (sel) => Array.from(root.querySelectorAll<HTMLElement>(sel)),
  } as Fixture;
}

/** Types into the composer and presses Enter. */
export function typeAndEnter(f: Fixture, text: string, init: KeyboardEventInit = {}): void {
  const input = f.$(".krypton-input") as HTMLTextAreaElement;
  input.value = text;
  input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true, ...init }));
}

export function agentNote(): AgentResult {
  return {
    kind: "note-created",
    agent: "create-note",
    text: "Created [[Krypton/photosynthesis]]",
    path: "Krypton/photosynthesis.md",
    title: "Photosynthesis",
    preview: "# Photosynthesis\n\nPlants turn **light** into sugar.",
  };
}
