import { isAbortError } from "../../core/providers/provider-error";
import type { RetrievalMode } from "../../core/settings";
import { usesNotes } from "../../core/chat/retrieval";
import { keywordOnlyReason } from "../../core/search/keyword-only";
import type { Flow } from "../../core/workflows/flow-schema";
import { toNotePath, VaultPathError } from "../../core/notes/vault-path-policy";
import { stringOption, type ParsedArgs } from "../args";
import type { CommandContext } from "../command";
import { CliError, describeError, EXIT_INTERRUPTED, UsageError } from "../errors";
import { openIndex, type VaultSession } from "../vault-session";
import type { WarnOnce } from "../warn-once";

/**
 * Runs work that Ctrl+C should cancel cleanly (the index saves what it has, the lock is released)
 * instead of killing the process mid-write. A cancelled run ends with exit code 130.
 */
export async function withAbortOnInterrupt<T>(ctx: CommandContext, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const release = ctx.interrupts.push(() => controller.abort());
  try {
    return await work(controller.signal);
  } catch (err) {
    if (controller.signal.aborted && isAbortError(err)) throw new CliError("interrupted", EXIT_INTERRUPTED);
    throw err;
  } finally {
    release();
  }
}

/** The vault (and the query, for some commands) are positional; anything more is likely a quoting mistake. */
export function checkPositionals(positionals: string[], max: number, hint = ""): void {
  if (positionals.length > max) throw new UsageError(`unexpected argument "${positionals[max]}"${hint}`);
}

/** The action word of a command that has several (goals, flow), or a UsageError naming the ones there are. */
export function actionOf<A extends string>(action: string | undefined, actions: readonly A[]): A {
  const choices = `${actions.slice(0, -1).join(", ")} or ${actions[actions.length - 1]}`;
  if (action === undefined) throw new UsageError(`missing action: ${choices}`);
  if (!(actions as readonly string[]).includes(action)) throw new UsageError(`unknown action "${action}": use ${choices}`);
  return action as A;
}

/**
 * Brings the index up to date when an answer may need it: retrieval modes, agent mode whose tools need it
 * (AgentService.needsIndex: the preset's tools), the intent agents (search, summarize) and workflows whose
 * tools need it; before it opens, the embedding server is checked (once per session). A run that needs none
 * of these opens no index and contacts no embedder. An index that fails to open is not fatal: the chat
 * pipeline answers without notes and says so. An embedder that is down is said by the answers that search (the retrieval notice,
 * "find notes about X" results); agent mode's searches tell only the model, so its answers say it through
 * agentKeywordOnly (consumeAnswer).
 *
 * One per run: `krypton chat` prepares again at each /mode and /agent switch, and a user should hear a
 * warning once per run unless the situation changed. So the index is opened again only when a switch needs
 * more of it (searching, after the intent agents alone), and its warnings go through the run's WarnOnce.
 */
export class IndexPreparation {
  /** What the index was opened for: "search" covers "none". */
  private prepared: "search" | "none" | null = null;

  constructor(
    private readonly session: VaultSession,
    private readonly once: WarnOnce,
  ) {}

  async prepare(mode: RetrievalMode, agent: boolean, signal: AbortSignal): Promise<void> {
    // Agent mode always answers (retrieval modes are for plain chat), searching only through its tools.
    const searches = agent ? this.session.core.agent.needsIndex() : usesNotes(mode);
    // Opened only for the intent agents, the index is not searched for every answer: no keyword-only warning then.
    const use = searches ? "search" : this.session.config.settings.agentsEnabled ? "none" : null;
    if (use !== null) await this.openFor(use, signal);
  }

  /**
   * A workflow whose tasks may call a tool that needs the index (search_notes, summarize_notes…:
   * WorkflowService.needsIndex) is prepared as for agent mode, or those tools would only answer that the
   * index is not ready; first, as every command that searches, the embedding server is checked (once per
   * session). One whose tools only read, list or write notes opens no index and contacts no embedder.
   */
  async prepareFlow(flow: Flow, signal: AbortSignal): Promise<void> {
    if (this.session.core.workflows.needsIndex(flow)) await this.openFor("search", signal);
  }

  /** Checks the embedding server (once per session), then opens the index unless it is open for this use already. */
  private async openFor(use: "search" | "none", signal: AbortSignal): Promise<void> {
    if (this.prepared === "search" || this.prepared === use) return;
    await this.session.probeEmbedder();
    try {
      await openIndex(this.session, this.once.output, { signal, use });
      this.prepared = use;
    } catch (err) {
      if (signal.aborted) throw new CliError("interrupted", EXIT_INTERRUPTED);
      this.once.warn(`the index could not be opened (${describeError(err)}); answering without your notes`);
    }
  }

  /** Why agent mode's searches match notes by keywords only (keywordOnlyReason), or null; null too while no index is open for searching. */
  agentKeywordOnly(): string | null {
    return this.prepared === "search" ? keywordOnlyReason(this.session.core.index.status()) : null;
  }
}

/** --note as a vault-relative path; an absolute path inside the vault is accepted, as MCP does. */
export function notePathOption(args: ParsedArgs, session: VaultSession): string | undefined {
  const raw = stringOption(args, "note");
  if (raw === undefined) return undefined;
  try {
    return toNotePath(raw, { configDir: session.config.configDir, vaultRoot: session.root, access: "read" }, "--note path");
  } catch (err) {
    if (err instanceof VaultPathError) throw new UsageError(err.message);
    throw err;
  }
}

