// The chat view's state machine, free of Obsidian and the DOM: which conversation is shown, its
// messages, whether an answer is streaming, and the user's actions (send, stop, regenerate, retry,
// edit last, switch conversation). The view renders what this emits; tests drive it directly.
import type { AgentResult } from "../../core/agents/agent";
import type { ChatEvent, ChatServiceApi, Source } from "../../core/chat/chat-types";
import type { ConversationStoreApi, StoredMessage } from "../../core/chat/conversation-types";
import { renamedPath, type NoteRename } from "../../core/chat/citation-renames";
import { newId } from "../../core/chat/ids";
import type { RetrievalMode } from "../../core/settings";
import type { AgentService } from "../../core/agent-loop/agent-service";
import type { AgentStep, ConfirmDecision, ConfirmRequest } from "../../core/agent-loop/agent-types";
import type { TokenUsage } from "../../core/ports/chat-model";
import { agentCommandOutput, isAgentCommand } from "./agent-commands";
import { errorMessage } from "../../core/util/errors";
import { resultText, stepLine } from "../../core/workflows/flow-report";
import { parseRunCommand } from "../../core/workflows/run-command";
import type { WorkflowService } from "../../core/workflows/workflow-service";

export type MessageStatus = "streaming" | "done" | "stopped" | "error";

export interface ChatErrorInfo {
  code: string;
  message: string;
  retryable: boolean;
}

export interface MessageModel {
  /** Stable key for the DOM; equals the stored id once known. */
  key: string;
  /** Id in the conversation store, when saved. */
  id?: string;
  role: "user" | "assistant";
  content: string;
  mode?: RetrievalMode;
  sources: Source[];
  agent?: AgentResult;
  notices: string[];
  status: MessageStatus;
  error?: ChatErrorInfo;
  /** Agent mode: the tool calls behind the answer (collapsed under it). */
  steps?: AgentStep[];
  usage?: TokenUsage;
  /** Agent mode: a write waits for the user's answer (preview and three buttons). */
  confirm?: PendingConfirm;
  /** Output of a chat command (/steps, /log, /tools, /config, /run): shown, never saved or sent to a model. */
  local?: boolean;
  /** A /run result: local, but it keeps Copy, Insert and Create note. */
  workflowResult?: boolean;
}

export interface PendingConfirm {
  request: ConfirmRequest;
  /** Set once answered, so the block shows what the user chose. */
  decision?: ConfirmDecision;
}

export type ControllerEvent =
  /** The whole list changed (new chat, another conversation). */
  | { type: "reset" }
  | { type: "added"; message: MessageModel }
  | { type: "removed"; key: string }
  /** Streamed text appended to a message (content already includes it). */
  | { type: "token"; message: MessageModel; text: string }
  /** Anything else about one message changed: re-render it. */
  | { type: "updated"; message: MessageModel }
  | { type: "streaming"; streaming: boolean }
  | { type: "editing"; text: string | null }
  /** Conversations were created, renamed, deleted or gained messages. */
  | { type: "history" };

export interface ChatControllerDeps {
  chat: ChatServiceApi;
  conversations: ConversationStoreApi;
  activeNotePath: () => string | undefined;
  initialMode: RetrievalMode;
  /** Agent mode; absent: no agent toggle or agent commands. */
  agent?: AgentService;
  /** `/run <flow> <input>`; absent: the command is not offered. */
  workflows?: WorkflowService;
  initialAgentMode?: boolean;
  /** The active note's text, the input of `/run` when none is typed. */
  activeNoteText?: () => Promise<string | undefined>;
}

let localKeys = 0;
const nextKey = () => `local-${++localKeys}`;

function fromStored(m: StoredMessage): MessageModel {
  return {
    key: m.id,
    id: m.id,
    role: m.role,
    content: m.content,
    mode: m.mode,
    sources: m.sources ?? [],
    agent: m.agent,
    notices: m.notices ?? [],
    status: m.error ? "error" : m.stopped || m.partial ? "stopped" : "done",
    error: m.error ? { code: "stored", message: m.error, retryable: true } : undefined,
    ...(m.steps?.length ? { steps: m.steps } : {}),
    ...(m.usage ? { usage: m.usage } : {}),
  };
}

export class ChatController {
  private listeners = new Set<(event: ControllerEvent) => void>();
  private _messages: MessageModel[] = [];
  private _conversationId: string | undefined;
  private _title = "";
  private abort: AbortController | null = null;
  private running: Promise<void> | null = null;
  /** Set while the user edits their last message (Up on an empty box). */
  private editingKey: string | null = null;
  /** Bumped on every conversation switch, so a late load never overwrites a newer one. */
  private generation = 0;

  mode: RetrievalMode;
  useActiveNote = false;
  /** Agent mode: what the fixed agents do not recognise goes to the tool loop. */
  agentMode: boolean;
  /** Resolvers of confirmations still waiting, by message key. */
  private readonly confirmWaiters = new Map<string, (decision: ConfirmDecision) => void>();

  constructor(private readonly deps: ChatControllerDeps) {
    this.mode = deps.initialMode;
    this.agentMode = Boolean(deps.agent && deps.initialAgentMode);
  }

  get messages(): readonly MessageModel[] {
    return this._messages;
  }
  get conversationId(): string | undefined {
    return this._conversationId;
  }
  get title(): string {
    return this._title;
  }
  get streaming(): boolean {
    return this.abort !== null;
  }
  get editing(): boolean {
    return this.editingKey !== null;
  }
  /** Resolves when the current answer (if any) has finished. */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  subscribe(listener: (event: ControllerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: ControllerEvent): void {
    for (const l of this.listeners) l(event);
  }

  /** Sends a question; false when there is nothing to send or an answer is still streaming. */
  send(text: string): boolean {
    const question = text.trim();
    if (!question || this.streaming) return false;
    if (this.deps.agent && isAgentCommand(question)) {
      this.push({ key: nextKey(), role: "user", content: question, sources: [], notices: [], status: "done", local: true });
      const output = agentCommandOutput(question, this.deps.agent, this._conversationId, this.agentMode);
      this.push({ key: nextKey(), role: "assistant", content: output, sources: [], notices: [], status: "done", local: true });
      return true;
    }
    const run = this.deps.workflows ? parseRunCommand(question) : null;
    if (run) {
      this.running = this.runWorkflow(question, run.ref, run.input);
      return true;
    }
    const editing = this.editingKey !== null;
    this.editingKey = null;
    if (editing) this.emit({ type: "editing", text: null });
    this.running = this.runSend(question, editing);
    return true;
  }

  private async runSend(question: string, replaceLast: boolean): Promise<void> {
    if (replaceLast) await this.dropLastExchange();
    const user: MessageModel = { key: nextKey(), role: "user", content: question, sources: [], notices: [], status: "done", mode: this.mode };
    this.push(user);
    await this.stream(question, false);
  }

  /**
   * `/run <flow> <input>`: each step appears in a local message as it runs (Stop cancels the running step),
   * then the result, which can be copied, inserted or saved like an answer. Nothing is sent to the chat model.
   */
  private async runWorkflow(command: string, ref: string, input: string): Promise<void> {
    const workflows = this.deps.workflows!;
    this.push({ key: nextKey(), role: "user", content: command, sources: [], notices: [], status: "done", local: true });
    const message: MessageModel = { key: nextKey(), role: "assistant", content: "", sources: [], notices: [], status: "streaming", local: true };
    this.push(message);
    const fail = (text: string) => {
      message.status = "done";
      message.content = text;
      this.emit({ type: "updated", message });
    };
    if (!input) input = (await this.deps.activeNoteText?.()) ?? "";
    if (!input.trim()) return fail("Give the input after the workflow: `/run \"Retry loop\" the text to start from` (or open a note to run it on).");
    const found = await workflows.flowNamed(ref);
    if ("error" in found) {
      if (found.issues.length === 0) return fail(`Could not run the workflow: ${found.error}`);
      return fail(`${found.error}:\n${found.issues.map((e) => `- \`${e.pointer}\`: ${e.message}`).join("\n")}`);
    }
    const flow = found.flow;
    const abort = new AbortController();
    this.abort = abort;
    this.emit({ type: "streaming", streaming: true });
    const lines: string[] = [];
    const show = (extra = "") => {
      message.content = `**Workflow ${flow.id}**\n\n${lines.join("\n")}${extra}`;
      this.emit({ type: "updated", message });
    };
    try {
      const result = await workflows.run(flow, input, {
        signal: abort.signal,
        confirm: (request, signal) => this.askConfirm(message, request, signal),
        onStep: (step, phase) => {
          if (phase === "start") show(`\n${lines.length + 1}. ${step.agent} (${step.type})…`);
          else {
            lines.push(stepLine(step, lines.length));
            show();
          }
        },
      });
      const text = resultText(result);
      const outcome = `${result.status}: ${result.message}`;
      message.content = text ? `${text}\n\n*${flow.id}: ${result.status} (${result.steps.map((st) => st.agent).join(" → ")})*` : outcome;
      // Under an output it qualifies (a limit's); a run without one (a failed run) says it as its content.
      if (text && result.status !== "finished") message.notices.push(outcome);
      // Under the run, as a RAG answer's keyword-only notice is under the answer.
      message.notices.push(...(result.keywordOnlyRemarks ?? []));
      message.workflowResult = Boolean(text);
      message.status = result.status === "stopped" ? "stopped" : "done";
    } catch (err) {
      message.status = "error";
      message.error = { code: "workflow", message: errorMessage(err), retryable: false };
    } finally {
      if (this.abort === abort) this.abort = null;
      this.emit({ type: "streaming", streaming: false });
    }
    this.emit({ type: "updated", message });
  }

  /** Asks again for the last answer (also how an error is retried). */
  regenerate(): boolean {
    if (this.streaming) return false;
    const lastUser = [...this._messages].reverse().find((m) => m.role === "user");
    // A local command (`/run`, `/tools`) was never a question to the chat model: it is not sent as one.
    if (!lastUser || lastUser.local) return false;
    const last = this._messages[this._messages.length - 1];
    const hasAnswer = last && last.role === "assistant";
    if (hasAnswer) {
      this._messages.pop();
      this.emit({ type: "removed", key: last.key });
    }
    // Once the question is stored, the service replaces the old answer instead of adding a question.
    this.running = this.stream(lastUser.content, Boolean(this._conversationId));
    return true;
  }

  retry(): boolean {
    return this.regenerate();
  }

  stop(): void {
    this.abort?.abort();
  }

  /** The user answered a pending write confirmation (allow once / for this conversation / deny). */
  decide(key: string, decision: ConfirmDecision): void {
    const resolve = this.confirmWaiters.get(key);
    if (!resolve) return;
    this.confirmWaiters.delete(key);
    resolve(decision);
  }

  /** Shows the preview under the streaming answer and waits for a button; Stop counts as deny. */
  private askConfirm(answer: MessageModel, request: ConfirmRequest, signal?: AbortSignal): Promise<ConfirmDecision> {
    const pending: PendingConfirm = { request };
    answer.confirm = pending;
    this.emit({ type: "updated", message: answer });
    return new Promise<ConfirmDecision>((resolve) => {
      const finish = (decision: ConfirmDecision) => {
        signal?.removeEventListener("abort", onAbort);
        this.confirmWaiters.delete(answer.key);
        pending.decision = decision;
        this.emit({ type: "updated", message: answer });
        resolve(decision);
      };
      const onAbort = () => finish("deny");
      signal?.addEventListener("abort", onAbort, { once: true });
      this.confirmWaiters.set(answer.key, finish);
    });
  }

  /** Up on an empty box: returns the last question for editing, or null when there is none. */
  editLast(): string | null {
    if (this.streaming) return null;
    const lastUser = [...this._messages].reverse().find((m) => m.role === "user");
    if (!lastUser) return null;
    this.editingKey = lastUser.key;
    this.emit({ type: "editing", text: lastUser.content });
    return lastUser.content;
  }

  cancelEdit(): void {
    if (this.editingKey === null) return;
    this.editingKey = null;
    this.emit({ type: "editing", text: null });
  }

  newChat(): void {
    this.stop();
    this.generation++;
    this._conversationId = undefined;
    this._title = "";
    this._messages = [];
    this.editingKey = null;
    this.emit({ type: "reset" });
  }

  /** Shows a stored conversation. */
  async open(id: string): Promise<boolean> {
    this.stop();
    const gen = ++this.generation;
    const conv = await this.deps.conversations.get(id);
    if (gen !== this.generation) return false;
    if (!conv) return false;
    this.confirmWaiters.clear();
    this._conversationId = conv.id;
    this._title = conv.title;
    this._messages = conv.messages.map(fromStored);
    this.editingKey = null;
    this.emit({ type: "reset" });
    return true;
  }

  /**
   * A note was renamed or moved: the answers shown cite it by its new path, by the rules the store uses for
   * the saved ones (renamedPath), so a citation opens it without reopening the conversation. New source
   * objects, not edits: the array the chat service handed over stays its own.
   */
  followNoteRename(rename: NoteRename): void {
    for (const message of this._messages) {
      if (!message.sources.some((s) => s.kind === "note" && renamedPath(s.path, [rename]) !== s.path)) continue;
      message.sources = message.sources.map((s) => (s.kind === "note" ? { ...s, path: renamedPath(s.path, [rename]) } : s));
      this.emit({ type: "updated", message });
    }
  }

  /** The conversation was renamed or deleted elsewhere (history panel). */
  async conversationChanged(id: string, change: "renamed" | "deleted"): Promise<void> {
    if (id !== this._conversationId) return;
    if (change === "deleted") this.newChat();
    else {
      const conv = await this.deps.conversations.get(id);
      if (conv) {
        this._title = conv.title;
        this.emit({ type: "reset" });
      }
    }
  }

  /**
   * Shows an agent result produced outside the chat (a command such as "Summarize note") as an answer
   * in the current conversation, saved like any other message.
   */
  async showAgentResult(result: AgentResult): Promise<void> {
    let id = this._conversationId;
    if (!id) {
      const conv = await this.deps.conversations.create(result.kind === "summary" ? result.title : undefined);
      id = conv.id;
      this._conversationId = id;
      this._title = conv.title;
    }
    const stored: StoredMessage = {
      id: newId("m", Date.now()),
      role: "assistant",
      content: result.text,
      createdAt: Date.now(),
      agent: result,
    };
    await this.deps.conversations.put(id, stored);
    this.push(fromStored(stored));
    this.emit({ type: "history" });
  }

  private push(message: MessageModel): void {
    this._messages.push(message);
    this.emit({ type: "added", message });
  }

  /** Removes the last question and its answer from view and store (editing the last message). */
  private async dropLastExchange(): Promise<void> {
    const lastUserIndex = this._messages.map((m) => m.role).lastIndexOf("user");
    if (lastUserIndex < 0) return;
    const removed = this._messages.splice(lastUserIndex);
    for (const m of removed) {
      if (m.id && this._conversationId) await this.deps.conversations.removeMessage(this._conversationId, m.id);
      this.emit({ type: "removed", key: m.key });
    }
  }

  private async stream(question: string, regenerate: boolean): Promise<void> {
    const gen = this.generation;
    const answer: MessageModel = { key: nextKey(), role: "assistant", content: "", sources: [], notices: [], status: "streaming", mode: this.mode };
    this.push(answer);
    const abort = new AbortController();
    this.abort = abort;
    this.emit({ type: "streaming", streaming: true });
    try {
      const events = this.deps.chat.send(question, {
        mode: this.mode,
        conversationId: this._conversationId,
        activeNotePath: this.deps.activeNotePath(),
        useActiveNote: this.useActiveNote,
        signal: abort.signal,
        regenerate,
        ...(this.agentMode ? { agent: true, confirm: (request, signal) => this.askConfirm(answer, request, signal) } : {}),
      });
      for await (const event of events) {
        if (gen !== this.generation) break; // the user switched conversations: stop rendering this one
        this.apply(answer, event);
      }
      if (answer.status === "streaming") answer.status = abort.signal.aborted ? "stopped" : "done";
    } catch (err) {
      if (abort.signal.aborted) answer.status = "stopped";
      else {
        answer.status = "error";
        answer.error = { code: "unexpected", message: errorMessage(err), retryable: true };
      }
    } finally {
      if (this.abort === abort) this.abort = null;
    }
    if (gen !== this.generation) return;
    this.emit({ type: "updated", message: answer });
    this.emit({ type: "streaming", streaming: false });
    await this.syncIds();
    this.emit({ type: "history" });
  }

  private apply(answer: MessageModel, event: ChatEvent): void {
    switch (event.type) {
      case "sources":
        answer.sources = event.sources;
        this.emit({ type: "updated", message: answer });
        break;
      case "token":
        answer.content += event.text;
        this.emit({ type: "token", message: answer, text: event.text });
        break;
      case "agent":
        answer.agent = event.result;
        if (!answer.content) answer.content = event.result.text;
        this.emit({ type: "updated", message: answer });
        break;
      case "notice":
        answer.notices.push(event.message);
        this.emit({ type: "updated", message: answer });
        break;
      case "step":
        (answer.steps ??= []).push(event.step);
        this.emit({ type: "updated", message: answer });
        break;
      case "retract":
        // The model thought aloud before a tool call: the text moves into the step, out of the answer.
        answer.content = answer.content.slice(0, Math.max(0, answer.content.length - event.text.length));
        this.emit({ type: "updated", message: answer });
        break;
      case "usage":
        answer.usage = event.usage;
        break;
      case "error":
        answer.status = "error";
        answer.error = { code: event.code, message: event.message, retryable: event.retryable };
        break;
      case "done":
        if (event.conversationId) this._conversationId = event.conversationId;
        answer.id = event.messageId;
        // The answer as saved, shown as a reload would show it: one of only whitespace is none (ChatService).
        answer.content = event.answer;
        if (answer.status !== "error") answer.status = event.stopped ? "stopped" : "done";
        break;
    }
  }

  /** Learns the stored ids of the last exchange (needed to edit or regenerate it later) and the title. */
  private async syncIds(): Promise<void> {
    const id = this._conversationId;
    if (!id) return;
    const conv = await this.deps.conversations.get(id).catch(() => null);
    if (!conv || id !== this._conversationId) return;
    this._title = conv.title;
    const stored = conv.messages;
    const shown = this._messages.filter((m) => !m.local);
    for (let i = 1; i <= Math.min(2, stored.length, shown.length); i++) {
      const s = stored[stored.length - i];
      const m = shown[shown.length - i];
      if (s.role === m.role && m.id === undefined) m.id = s.id;
    }
  }
}
