/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
// Workflows in the plugin: the krypton-flow block (status, Mermaid source handed to Obsidian's renderer,
// Run), the "Run workflow…" command and its modal, against the loopback Ollama server.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { clearNotices, noticeMessages, type StubFileLeaf, TFile } from "../support/obsidian-stub";
import { MarkdownView } from "../support/obsidian-stub/workspace";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import { loadPlugin, waitFor, type LoadedPlugin } from "./plugin-harness";
import { getChatView } from "../../src/obsidian/chat-view/chat-commands";

const WORKFLOWS = join(__dirname, "..", "..", "examples", "demo-vault", "Workflows");
const pipeline = readFileSync(join(WORKFLOWS, "Sequential pipeline.md"), "utf8");
const blockOf = (md: string) => /```krypton-flow\n([\s\S]*?)\n```/.exec(md)![1];

let ollama: OllamaTestServer;
let p: LoadedPlugin;

beforeEach(async () => {
  clearNotices();
  ollama = await startOllamaServer();
  p = await loadPlugin(
    { "Workflows/Pipeline.md": pipeline, "Notes/Source.md": "# Source\n\nRaw meeting notes." },
    { data: { ollamaUrl: ollama.url, chatProvider: "ollama", chatModel: "llama3.1:8b", newNoteFolder: "Krypton" } },
  );
  await p.layoutReady();
});
afterEach(async () => {
  document.body.querySelectorAll(".modal-container, .markdown-preview-section").forEach((el) => el.remove());
  await p.close();
  await ollama.close();
});

const openModal = () => document.body.querySelector<HTMLElement>(".modal-container:last-child")!;
const button = (root: HTMLElement, text: string) => Array.from(root.querySelectorAll("button")).find((b) => b.textContent === text) as HTMLButtonElement;
const stubPlugin = () => p.plugin as unknown as { renderCodeBlock(language: string, source: string, path: string): Promise<{ el: HTMLElement }> };

it("a valid block shows its status, hands Obsidian a mermaid block of the flow, and offers Run", async () => {
  const { el } = await stubPlugin().renderCodeBlock("krypton-flow", blockOf(pipeline), "Workflows/Pipeline.md");
  expect(el.querySelector(".krypton-flow-validation")!.textContent).toBe("Valid workflow: 3 agents");
  const mermaid = el.querySelector("code.language-mermaid")!.textContent!;
  expect(mermaid).toMatch(/^flowchart TD\n/);
  expect(mermaid).toContain('a0["extract_facts"]');
  expect(button(el, "Run")).toBeTruthy();
});

it("the block counts in words: \"1 agent\", not \"1 agents\"", async () => {
  const { el } = await stubPlugin().renderCodeBlock("krypton-flow", '{"id":"one","agents":[{"name":"a","type":"transform","params":{"trim":true}}]}', "One.md");
  expect(el.querySelector(".krypton-flow-validation")!.textContent).toBe("Valid workflow: 1 agent");
});

it("an invalid block lists its problems with pointers and has no Run button", async () => {
  const { el } = await stubPlugin().renderCodeBlock("krypton-flow", '{"id":"x","defaultModel":"ollama/llama3.1:8b","agents":[{"name":"a","type":"task","params":{"task":"t"}}],"transitions":[{"from":"a","to":"nowhere"}]}', "X.md");
  expect(el.querySelector(".krypton-flow-validation")!.textContent).toBe("1 problem: this workflow cannot run");
  expect(el.querySelector(".krypton-flow-issues")!.textContent).toBe('/transitions/0/to: unknown agent "nowhere"');
  expect(button(el, "Run")).toBeUndefined();
  const broken = await stubPlugin().renderCodeBlock("krypton-flow", "{ not json", "X.md");
  expect(broken.el.textContent).toMatch(/^the flow is not valid JSON/);
});

it("Run on the active note: steps appear as they run, then the result can be saved as a new note", async () => {
  const leaf = p.app.workspace.getLeaf(true) as StubFileLeaf;
  await leaf.openFile(p.app.vault.getFileByPath("Notes/Source.md") as TFile);
  (leaf.view as MarkdownView).editor = { getSelection: () => "", replaceSelection: () => undefined, getValue: () => "" } as never;
  ollama.setDefault({ reply: (req) => (req.userText.includes("List every fact") ? "facts" : req.userText.includes("Group these") ? "groups" : "Final summary.") });

  const { el } = await stubPlugin().renderCodeBlock("krypton-flow", blockOf(pipeline), "Workflows/Pipeline.md");
  button(el, "Run").click();
  await waitFor(() => openModal()?.textContent?.includes("Run on Source") ?? false);
  const modal = openModal();
  const row = Array.from(modal.querySelectorAll(".setting-item")).find((r) => r.textContent!.includes("Run on Source"))!;
  (row.querySelector("button") as HTMLButtonElement).click();
  await waitFor(() => modal.querySelector(".krypton-flow-status") !== null);
  expect(Array.from(modal.querySelectorAll(".krypton-flow-step")).map((li) => li.textContent!.replace(/ [\d.]+ s.*$/, ""))).toEqual(["extract_facts (task)", "organise (task)", "summarise (task)"]);
  expect(modal.querySelector(".krypton-flow-status")!.textContent).toBe("finished: Finished.");
  expect(modal.querySelector(".krypton-flow-result")!.textContent).toContain("Final summary.");
  expect((ollama.requestsTo("chat")[0].body as { messages: { content: string }[] }).messages[1].content).toContain("Raw meeting notes.");

  button(modal, "Save as note").click();
  await waitFor(() => noticeMessages().some((m) => m.startsWith("Saved ")));
  expect(await p.temp.read("Krypton/sequential-pipeline-result.md")).toBe("Final summary.\n");
  button(modal, "Save trace").click();
  await waitFor(() => noticeMessages().filter((m) => m.startsWith("Saved ")).length === 2);
  expect(await p.temp.read("Krypton/sequential-pipeline-trace.md")).toContain("**Path:** extract_facts → organise → summarise");
  expect(await p.temp.read("Notes/Source.md")).toBe("# Source\n\nRaw meeting notes.");
});

it("Stop during a run ends it within the running step", async () => {
  ollama.setDefault({ reply: "a slow answer with many words", tokenDelayMs: 150 });
  const { el } = await stubPlugin().renderCodeBlock("krypton-flow", blockOf(pipeline), "Workflows/Pipeline.md");
  button(el, "Run").click();
  await waitFor(() => openModal()?.querySelector("textarea") !== null);
  const modal = openModal();
  modal.querySelector("textarea")!.value = "typed input";
  button(modal, "Run on this text").click();
  await waitFor(() => modal.querySelector(".krypton-flow-step.is-running") !== null && ollama.requestsTo("chat").length === 1);
  button(modal, "Stop").click();
  await waitFor(() => modal.querySelector(".krypton-flow-status") !== null);
  expect(modal.querySelector(".krypton-flow-status")!.textContent).toBe("stopped: Stopped.");
  expect(ollama.requestsTo("chat")).toHaveLength(1);
});

/** The pipeline's first step answers, its second fails: the output before the failure is not a result. */
const failSecondStep = () =>
  ollama.script([
    { route: "chat", reply: "facts" },
    { route: "chat", status: 400, error: "the organiser broke", times: Infinity },
  ]);

it("a failed run shows as failed: its reason, no result to copy, insert or save; the trace can be saved", async () => {
  failSecondStep();
  const { el } = await stubPlugin().renderCodeBlock("krypton-flow", blockOf(pipeline), "Workflows/Pipeline.md");
  button(el, "Run").click();
  await waitFor(() => openModal()?.querySelector("textarea") !== null);
  const modal = openModal();
  modal.querySelector("textarea")!.value = "typed input";
  button(modal, "Run on this text").click();
  await waitFor(() => modal.querySelector(".krypton-flow-status") !== null);
  const status = modal.querySelector(".krypton-flow-status")!;
  expect(status.textContent).toMatch(/^failed: Agent "organise" failed: .*the organiser broke/);
  expect(status.classList.contains("is-failed")).toBe(true);
  expect(modal.querySelector(".krypton-flow-step.is-error")!.textContent).toMatch(/^organise \(task\)/);
  expect(modal.querySelector(".krypton-flow-result")).toBeNull();
  for (const label of ["Copy", "Insert at cursor", "Save as note"]) expect(button(modal, label)).toBeUndefined();
  expect(button(modal, "Save trace")).toBeTruthy();
});

it("the Run workflow… command lists flow notes", async () => {
  const command = p.app.commands.commands["krypton:run-workflow"];
  expect(command.name).toBe("Run workflow…");
  command.callback!();
  await waitFor(() => document.body.querySelectorAll(".suggestion-item").length > 0 || (openModal()?.textContent?.includes("Pipeline") ?? false));
  expect(openModal().textContent).toContain("Pipeline");
  expect(openModal().textContent).not.toContain("Source");
});

it("Run workflow… lists a note whose flow cannot be read with its problem, in flow validate's words, and does not run it", async () => {
  const block = (json: string) => "```krypton-flow\n" + json + "\n```\n";
  await p.app.vault.create("Workflows/Broken.md", "# Broken\n\n" + block('{ "id": "broken", }'));
  await p.app.vault.create("Workflows/Two.md", "# Two\n\n" + block(blockOf(pipeline)) + "\n" + block(blockOf(pipeline)));
  await p.app.vault.create("Notes/Mention.md", "A note about the krypton-flow format, with no block.");
  p.app.commands.commands["krypton:run-workflow"].callback!();
  await waitFor(() => document.body.querySelectorAll(".suggestion-item").length >= 3);
  const items = Array.from(document.body.querySelectorAll(".suggestion-item")).map((el) => el.textContent!);
  expect(items).toHaveLength(3);
  expect(items.find((t) => t.startsWith("Broken"))).toMatch(/^BrokenWorkflows\/Broken\.md · not runnable: Broken\.md: the flow is not valid JSON at line 4, column \d+: /);
  expect(items.find((t) => t.startsWith("Two"))).toMatch(/^TwoWorkflows\/Two\.md · not runnable: Two\.md has 2 ```krypton-flow blocks \(at lines 3 and \d+\), and a workflow note holds one/);
  (Array.from(document.body.querySelectorAll<HTMLElement>(".suggestion-item")).find((el) => el.textContent!.startsWith("Two")))!.click();
  expect(noticeMessages().at(-1)).toMatch(/^Two cannot run: Two\.md has 2 ```krypton-flow blocks/);
  expect(ollama.requestsTo("chat")).toHaveLength(0);
});

describe("/run in the chat view", () => {
  const openChat = async () => {
    await p.app.workspace.getRightLeaf(false).setViewState({ type: "krypton-chat" });
    return getChatView(p.app as never)!;
  };

  it("runs a flow note by name: steps as it goes, then the result with Copy/Insert/Create note; the run is not a conversation", async () => {
    ollama.setDefault({ reply: (req) => (req.userText.includes("List every fact") ? "facts" : req.userText.includes("Group these") ? "groups" : "Final summary.") });
    const view = await openChat();
    expect(view.controller.send('/run "Pipeline" notes from the meeting')).toBe(true);
    await view.controller.idle();
    const [question, answer] = view.controller.messages.slice(-2);
    expect(question).toMatchObject({ role: "user", content: '/run "Pipeline" notes from the meeting', local: true });
    expect(answer).toMatchObject({ role: "assistant", status: "done", local: true, workflowResult: true });
    expect(answer.content).toBe("Final summary.\n\n*sequential-pipeline: finished (extract_facts → organise → summarise)*");
    expect((ollama.requestsTo("chat")[0].body as { messages: { content: string }[] }).messages[1].content).toContain("notes from the meeting");
    const el = view.containerEl.querySelectorAll(".krypton-message-assistant");
    const last = el[el.length - 1];
    expect(last.querySelector(".krypton-action-copy")).not.toBeNull();
    expect(last.querySelector(".krypton-action-regenerate")).toBeNull();
    expect(await p.services.core.conversations.list()).toEqual([]);
  });

  it("a failed run says it failed, with the step and the reason, and offers no result", async () => {
    failSecondStep();
    const view = await openChat();
    view.controller.send('/run "Pipeline" notes from the meeting');
    await view.controller.idle();
    const answer = view.controller.messages.at(-1)!;
    expect(answer).toMatchObject({ role: "assistant", status: "done", local: true, workflowResult: false, notices: [] });
    expect(answer.content).toMatch(/^failed: Agent "organise" failed: .*the organiser broke/);
    expect(answer.content).not.toContain("facts");
    const shown = Array.from(view.containerEl.querySelectorAll(".krypton-message-assistant")).at(-1)!;
    expect(shown.querySelector(".krypton-action-copy")).toBeNull();
  });

  it("a run that throws shows its error with no Retry, and regenerating never sends the /run to the chat model", async () => {
    const view = await openChat();
    const workflows = p.services.core.workflows as unknown as { run: () => Promise<never> };
    workflows.run = () => Promise.reject(new Error("the flow engine broke"));
    view.controller.send('/run "Pipeline" notes from the meeting');
    await view.controller.idle();
    expect(view.controller.messages.at(-1)).toMatchObject({ status: "error", error: { message: "the flow engine broke", retryable: false } });
    const shown = Array.from(view.containerEl.querySelectorAll(".krypton-message-assistant")).at(-1)!;
    expect(shown.querySelector(".krypton-error")?.textContent).toContain("the flow engine broke");
    expect(Array.from(shown.querySelectorAll("button")).map((b) => b.textContent)).not.toContain("Retry");
    expect(view.controller.retry()).toBe(false);
    await view.controller.idle();
    expect(ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("a gemini/… step with no Gemini key says to add one in Krypton's settings", async () => {
    const flow = { id: "cloud", agents: [{ name: "a", type: "task", model: "gemini/gemini-2.5-flash", params: { task: "t" } }] };
    await p.app.vault.create("Workflows/Cloud.md", "```krypton-flow\n" + JSON.stringify(flow) + "\n```\n");
    const view = await openChat();
    view.controller.send('/run "Cloud" some input');
    await view.controller.idle();
    expect(view.controller.messages.at(-1)!.content).toContain("cannot use gemini/gemini-2.5-flash: no Gemini API key is set (add one in Krypton's settings)");
  });

  it("an unknown flow or a missing input is explained", async () => {
    const view = await openChat();
    view.controller.send("/run nothing-like-this some input");
    await view.controller.idle();
    expect(view.controller.messages.at(-1)!.content).toMatch(/no workflow named "nothing-like-this"/);
    view.controller.send("/run sequential-pipeline");
    await view.controller.idle();
    expect(view.controller.messages.at(-1)!.content).toMatch(/^Give the input after the workflow/);
    expect(ollama.requestsTo("chat")).toHaveLength(0);
  });
});

describe("a step whose search matched notes by keywords only", () => {
  const RESEARCH = {
    id: "research",
    defaultModel: "ollama/llama3.1:8b",
    tools: ["search_notes"],
    agents: [{ name: "find", type: "task", params: { task: "Find my notes about {{input}}", toolNames: ["search_notes"] } }],
  };
  const UNAVAILABLE = /^Semantic search is unavailable \(.*Ollama failed \(500\).*\): notes were matched by keywords only\.$/;
  const scriptSearch = () =>
    ollama.script([
      { route: "chat", reply: "", extra: { toolCalls: [{ name: "search_notes", arguments: { query: "meeting" } }] } },
      { route: "chat", reply: "Notes/Source.md" },
    ]);

  beforeEach(async () => {
    // The embedding model fails from the start: the index is keyword-only and says why.
    await p.close();
    ollama.script({ route: "embed", status: 500, times: Infinity });
    p = await loadPlugin(
      { "Workflows/Research.md": "```krypton-flow\n" + JSON.stringify(RESEARCH) + "\n```\n", "Notes/Source.md": "# Source\n\nRaw meeting notes." },
      { data: { ollamaUrl: ollama.url, chatProvider: "ollama", chatModel: "llama3.1:8b", embeddingProvider: "ollama", embeddingModel: "nomic-embed-text" } },
    );
    await p.layoutReady();
    expect(p.services.core.index.status()).toMatchObject({ keywordOnly: true, embedderError: expect.stringContaining("500") });
  });

  it("the Run workflow modal says why under the run's status, once", async () => {
    scriptSearch();
    const { el } = await stubPlugin().renderCodeBlock("krypton-flow", JSON.stringify(RESEARCH), "Workflows/Research.md");
    button(el, "Run").click();
    await waitFor(() => openModal()?.querySelector("textarea") !== null);
    const modal = openModal();
    modal.querySelector("textarea")!.value = "meeting";
    button(modal, "Run on this text").click();
    await waitFor(() => modal.querySelector(".krypton-flow-status") !== null);
    expect(modal.querySelector(".krypton-flow-status")!.textContent).toBe("finished: Finished.");
    const remarks = Array.from(modal.querySelectorAll(".krypton-search-keyword-only")).map((r) => r.textContent);
    expect(remarks).toEqual([expect.stringMatching(UNAVAILABLE)]);
    // The search tool's own words, which the model got too.
    expect(JSON.stringify(ollama.requestsTo("chat")[1].body)).toContain(remarks[0]);
  });

  it("/run in the chat view has it among the run's notices", async () => {
    scriptSearch();
    await p.app.workspace.getRightLeaf(false).setViewState({ type: "krypton-chat" });
    const view = getChatView(p.app as never)!;
    view.controller.send("/run research meeting");
    await view.controller.idle();
    const answer = view.controller.messages.at(-1)!;
    expect(answer).toMatchObject({ status: "done", workflowResult: true, notices: [expect.stringMatching(UNAVAILABLE)] });
    expect(answer.content).toMatch(/^Notes\/Source\.md\n/);
    const shown = Array.from(view.containerEl.querySelectorAll(".krypton-message-assistant")).at(-1)!;
    expect(Array.from(shown.querySelectorAll(".krypton-notice")).map((n) => n.textContent)).toEqual([expect.stringMatching(/Semantic search is unavailable \(/)]);
  });
});

describe("a task whose tool loop ends at its step limit", () => {
  const LOOPING = {
    id: "looping",
    defaultModel: "ollama/llama3.1:8b",
    tools: ["read_note"],
    agents: [
      { name: "read", type: "task", config: { maxIterations: 2 }, params: { task: "Read the note about {{input}}", toolNames: ["read_note"] } },
      { name: "polish", type: "task", params: { task: "Polish: {{input}}" } },
    ],
    transitions: [{ from: "read", to: "polish" }],
  };
  const LIMIT = "stopped at the step limit (2 steps) before it finished";
  const MESSAGE = `Agent "read" ${LIMIT}; the last output is kept.`;
  const PARTIAL = "I could not finish within the step limit.";
  // A small model that asks for the same note forever.
  beforeEach(async () => {
    await p.close();
    p = await loadPlugin(
      { "Workflows/Looping.md": "```krypton-flow\n" + JSON.stringify(LOOPING) + "\n```\n", "Notes/Source.md": "# Source\n\nRaw meeting notes." },
      { data: { ollamaUrl: ollama.url, chatProvider: "ollama", chatModel: "llama3.1:8b" } },
    );
    await p.layoutReady();
    ollama.script({ route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Notes/Source.md" } }] }, times: Infinity });
  });

  it("the Run workflow modal marks the step and shows the run's status; nothing ran after it", async () => {
    const { el } = await stubPlugin().renderCodeBlock("krypton-flow", JSON.stringify(LOOPING), "Workflows/Looping.md");
    button(el, "Run").click();
    await waitFor(() => openModal()?.querySelector("textarea") !== null);
    const modal = openModal();
    modal.querySelector("textarea")!.value = "meeting";
    button(modal, "Run on this text").click();
    await waitFor(() => modal.querySelector(".krypton-flow-status") !== null);
    const rows = Array.from(modal.querySelectorAll(".krypton-flow-step"));
    expect(rows).toHaveLength(1);
    expect(rows[0].classList.contains("is-limited")).toBe(true);
    expect(rows[0].textContent).toMatch(new RegExp(`^read \\(task\\) .* · ${LIMIT.replace(/[()]/g, "\\$&")}$`));
    const status = modal.querySelector(".krypton-flow-status")!;
    expect(status.textContent).toBe(`step limit: ${MESSAGE}`);
    expect(status.classList.contains("is-step-limit")).toBe(true);
    expect(modal.querySelector(".krypton-flow-result")!.textContent).toContain(PARTIAL);
  });

  it("the modal names the loop guard as the run's status when that stopped the task", async () => {
    const guarded = { ...LOOPING, id: "guarded", agents: [{ ...LOOPING.agents[0], config: {} }, LOOPING.agents[1]] };
    const { el } = await stubPlugin().renderCodeBlock("krypton-flow", JSON.stringify(guarded), "Workflows/Looping.md");
    button(el, "Run").click();
    await waitFor(() => openModal()?.querySelector("textarea") !== null);
    const modal = openModal();
    modal.querySelector("textarea")!.value = "meeting";
    button(modal, "Run on this text").click();
    await waitFor(() => modal.querySelector(".krypton-flow-status") !== null);
    const status = modal.querySelector(".krypton-flow-status")!;
    expect(status.textContent).toBe('loop guard: Agent "read" stopped by the loop guard (3 repeated tool calls blocked) before it finished; the last output is kept.');
    expect(status.classList.contains("is-loop-guard")).toBe(true);
  });

  it("/run in the chat view keeps the step's output, marked, with the run's status among its notices", async () => {
    await p.app.workspace.getRightLeaf(false).setViewState({ type: "krypton-chat" });
    const view = getChatView(p.app as never)!;
    view.controller.send("/run looping meeting");
    await view.controller.idle();
    const answer = view.controller.messages.at(-1)!;
    expect(answer).toMatchObject({ status: "done", workflowResult: true, notices: [`step limit: ${MESSAGE}`] });
    expect(answer.content).toMatch(new RegExp(`^${PARTIAL}\\n\\n\\*\\(Stopped at the step limit: 2 steps\\.\\)\\*\\n\\n\\*looping: step limit \\(read\\)\\*$`));
  });
});
