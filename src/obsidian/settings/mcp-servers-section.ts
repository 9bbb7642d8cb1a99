import { Notice, Platform, Setting, type ButtonComponent } from "obsidian";
import type { McpServerStatus, McpTestResult } from "../../core/mcp-client/mcp-client-manager";
import { EMPTY_SERVER, McpConfigError, parseMcpServersJson, serverConfigProblem, type McpServerConfig } from "../../core/mcp-client/server-config";
import type { KryptonServices } from "../plugin-services";
import { heading, numberSetting, type SectionContext } from "./setting-controls";
import { countOf } from "../../core/util/text";

/** What the form is editing; kept across redraws of the tab (the tab redraws after each save). */
interface Draft {
  /** The name the server had when editing began; null for a new server. */
  original: string | null;
  server: McpServerConfig;
  problem?: string;
}
const drafts = new WeakMap<KryptonServices, Draft>();

/**
 * The user's own MCP servers, whose tools Krypton's agent may use: a list with status and "Test", a
 * paste-a-JSON-block import (Claude Desktop's format) and a small form. Stdio servers run on desktop only.
 */
export function renderMcpServersSection(ctx: SectionContext): void {
  const { services } = ctx;
  heading(ctx, "MCP servers", "Tools from your own MCP servers for agent mode. Their tools are never passed on through the MCP bridge.");
  const servers = services.settings().mcpServers;
  const statuses = new Map(services.core.mcp.status().map((s) => [s.name, s]));

  if (servers.length === 0) new Setting(ctx.containerEl).setDesc("No servers yet. Paste a configuration below or add one.");
  for (const server of servers) renderServerRow(ctx, server, statuses.get(server.name));
  ctx.onHide(services.core.mcp.onChange(() => refreshStatuses(ctx)));

  const draft = drafts.get(services);
  if (draft) renderForm(ctx, draft);
  else
    new Setting(ctx.containerEl).addButton((b) =>
      b.setButtonText("Add server").onClick(() => {
        drafts.set(services, { original: null, server: { ...EMPTY_SERVER, args: [], env: {}, headers: {}, transport: Platform.isDesktopApp ? "stdio" : "http" } });
        ctx.refresh();
      }),
    );

  renderImport(ctx);
  numberSetting(ctx, "mcpToolTimeoutMs", "Tool call timeout (ms)", "A call that takes longer is cancelled on the server and reported to the model.", {
    min: 1000,
    max: 600_000,
    integer: true,
  });
}

function renderServerRow(ctx: SectionContext, server: McpServerConfig, status: McpServerStatus | undefined): void {
  const { services } = ctx;
  const setting = new Setting(ctx.containerEl).setName(server.name);
  setting.settingEl.addClass("krypton-mcp-server");
  setting.settingEl.dataset.server = server.name;
  setting.descEl.createDiv({ text: describeServer(server) });
  const statusEl = setting.descEl.createDiv({ cls: "krypton-mcp-status" });
  showStatus(statusEl, server, status);
  const resultEl = setting.descEl.createEl("pre", { cls: "krypton-mcp-test-result" });
  resultEl.hide();

  setting
    .addToggle((t) =>
      t
        .setTooltip("Enabled")
        .setValue(server.enabled)
        .onChange(async (on) => {
          await saveServers(services, (servers) => servers.map((s) => (s.name === server.name ? { ...s, enabled: on } : s)));
          ctx.refresh();
        }),
    )
    .addButton((b) => testButton(b, resultEl, services, server))
    .addButton((b) =>
      b.setButtonText("Edit").onClick(() => {
        drafts.set(services, { original: server.name, server: structuredClone(server) });
        ctx.refresh();
      }),
    )
    .addExtraButton((b) =>
      b
        .setIcon("trash")
        .setTooltip("Remove server")
        .onClick(async () => {
          await saveServers(services, (servers) => servers.filter((s) => s.name !== server.name));
          ctx.refresh();
        }),
    );
}

function describeServer(server: McpServerConfig): string {
  if (server.transport === "stdio") return `Local command: ${[server.command, ...server.args].join(" ")}`;
  return `${server.transport === "sse" ? "Legacy SSE" : "HTTP"}: ${server.url}`;
}

function showStatus(el: HTMLElement, server: McpServerConfig, status: McpServerStatus | undefined): void {
  el.removeClass("mod-warning", "mod-success");
  if (server.transport === "stdio" && !Platform.isDesktopApp) {
    el.setText("Desktop only: local commands cannot run on mobile.");
    el.addClass("mod-warning");
    return;
  }
  if (!server.enabled) return void el.setText("Disabled.");
  switch (status?.state) {
    case "ready":
      el.setText(`Connected (${status.connectedVia ?? status.transport}), ${countOf(status.toolCount, "tool")}.`);
      el.addClass("mod-success");
      return;
    case "connecting":
      return void el.setText("Connecting…");
    case "failed":
    case "unsupported":
      el.setText(status.error ?? "Failed.");
      el.addClass("mod-warning");
      return;
    default:
      el.setText("Not connected yet (connects when Obsidian starts or when you save).");
  }
}

function refreshStatuses(ctx: SectionContext): void {
  const statuses = new Map(ctx.services.core.mcp.status().map((s) => [s.name, s]));
  for (const server of ctx.services.settings().mcpServers) {
    const row = Array.from(ctx.containerEl.querySelectorAll<HTMLElement>(".krypton-mcp-server")).find((el) => el.dataset.server === server.name);
    const statusEl = row?.querySelector<HTMLElement>(".krypton-mcp-status");
    if (statusEl) showStatus(statusEl, server, statuses.get(server.name));
  }
}

function showTestResult(el: HTMLElement, result: McpTestResult): void {
  el.removeClass("mod-warning", "mod-success");
  if (!result.ok) {
    el.setText(result.unsupported ? `${result.error}` : `Failed: ${result.error}`);
    el.addClass("mod-warning");
    return;
  }
  const lines = result.tools.map((t) => `• ${t.name}${t.description ? `: ${firstLine(t.description)}` : ""}`);
  el.setText([`Connected over ${result.transport}. ${countOf(result.tools.length, "tool")}:`, ...lines].join("\n"));
  el.addClass("mod-success");
}

function firstLine(text: string): string {
  const line = text.split("\n")[0].trim();
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

// ------------------------------------------------------------------------------------------ form

function renderForm(ctx: SectionContext, draft: Draft): void {
  const { services } = ctx;
  const s = draft.server;
  const secretsWhere = services.usesSecretStorage ? "Values are kept in Obsidian's secret storage." : "Values are kept in the plugin's data file.";
  const hiddenNote = `Saved values are shown as ${HIDDEN_VALUE}: leave one as it is to keep it, or type a new value to replace it.`;
  new Setting(ctx.containerEl).setName(draft.original ? `Edit ${draft.original}` : "New server").setHeading();
  new Setting(ctx.containerEl)
    .setName("Name")
    .setDesc("Tools appear as name:tool.")
    .addText((t) => t.setValue(s.name).setPlaceholder("My server").onChange((v) => void (s.name = v.trim())));
  new Setting(ctx.containerEl)
    .setName("Connection")
    .setDesc(Platform.isDesktopApp ? "A local command (stdio) or a remote server's URL." : "Local commands run on desktop only.")
    .addDropdown((d) =>
      d
        .addOption("stdio", "Local command (stdio)")
        .addOption("http", "Remote server (URL)")
        .addOption("sse", "Remote server, legacy protocol")
        .setValue(s.transport)
        .onChange((v) => {
          s.transport = v as McpServerConfig["transport"];
          ctx.refresh();
        }),
    );
  if (s.transport === "stdio") {
    new Setting(ctx.containerEl)
      .setName("Command")
      .setDesc("The program to start: its name or its full path.")
      .addText((t) => t.setValue(s.command).setPlaceholder("/usr/local/bin/npx").onChange((v) => void (s.command = v.trim())));
    new Setting(ctx.containerEl)
      .setName("Arguments")
      .setDesc("One per line.")
      .addTextArea((t) => t.setValue(s.args.join("\n")).onChange((v) => void (s.args = lines(v))));
    new Setting(ctx.containerEl)
      .setName("Environment")
      .setDesc(`One NAME=value per line. ${secretsWhere} ${hiddenNote}`)
      .addTextArea((t) => {
        t.inputEl.addClass("krypton-secret-textarea");
        const shown = s.env;
        t.setValue(formatHidden(shown, "=")).onChange((v) => void (s.env = unhide(parsePairs(v, "="), shown)));
      });
    new Setting(ctx.containerEl)
      .setName("Use login-shell path")
      .setDesc("Takes the command search path from your login shell, so commands such as npx are found when Obsidian was started from the dock or a desktop launcher.")
      .addToggle((t) => t.setValue(s.useLoginShellPath).onChange((on) => void (s.useLoginShellPath = on)));
  } else {
    new Setting(ctx.containerEl)
      .setName("URL")
      .setDesc("The server's MCP endpoint.")
      .addText((t) => t.setValue(s.url).onChange((v) => void (s.url = v.trim())));
    new Setting(ctx.containerEl)
      .setName("Headers")
      .setDesc(`One Name: value per line, e.g. Authorization: Bearer <token>. ${secretsWhere} ${hiddenNote}`)
      .addTextArea((t) => {
        t.inputEl.addClass("krypton-secret-textarea");
        const shown = s.headers;
        t.setValue(formatHidden(shown, ": ")).onChange((v) => void (s.headers = unhide(parsePairs(v, ":"), shown)));
      });
  }
  new Setting(ctx.containerEl).setName("Enabled").addToggle((t) => t.setValue(s.enabled).onChange((on) => void (s.enabled = on)));

  const actions = new Setting(ctx.containerEl);
  if (draft.problem) {
    actions.setDesc(draft.problem);
    actions.descEl.addClass("mod-warning");
  }
  const resultEl = actions.descEl.createEl("pre", { cls: "krypton-mcp-test-result" });
  resultEl.hide();
  actions
    .addButton((b) => testButton(b, resultEl, services, s))
    .addButton((b) => b.setButtonText("Cancel").onClick(() => (drafts.delete(services), ctx.refresh())))
    .addButton((b) =>
      b
        .setButtonText("Save")
        .setCta()
        .onClick(async () => {
          const others = services.settings().mcpServers.filter((o) => o.name !== draft.original);
          const problem = serverConfigProblem(s, others) ?? hiddenValueProblem(s);
          if (problem) {
            draft.problem = problem;
            ctx.refresh();
            return;
          }
          drafts.delete(services);
          await saveServers(services, (list) => {
            const at = list.findIndex((o) => o.name === draft.original);
            return at >= 0 ? list.map((o, i) => (i === at ? s : o)) : [...list, s];
          });
          ctx.refresh();
        }),
    );
}

function renderImport(ctx: SectionContext): void {
  const { services } = ctx;
  let text = "";
  const setting = new Setting(ctx.containerEl)
    .setName("Import configuration")
    .setDesc('Paste a Claude Desktop configuration ({"mcpServers": {...}}). Servers with the same name are replaced.');
  const messageEl = setting.descEl.createDiv({ cls: "krypton-mcp-import-message" });
  setting.addTextArea((t) => {
    t.inputEl.addClass("krypton-mcp-import");
    t.setPlaceholder('{"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}}}').onChange((v) => void (text = v));
  });
  setting.addButton((b) =>
    b.setButtonText("Import").onClick(async () => {
      messageEl.removeClass("mod-warning");
      let imported: McpServerConfig[];
      try {
        imported = parseMcpServersJson(text);
      } catch (err) {
        messageEl.setText(err instanceof McpConfigError ? `Not imported: ${err.message}` : "Not imported: the configuration could not be read.");
        messageEl.addClass("mod-warning");
        return;
      }
      const names = new Set(imported.map((s) => s.name));
      await saveServers(services, (servers) => [...servers.filter((s) => !names.has(s.name)), ...imported]);
      new Notice(`Imported ${countOf(imported.length, "MCP server")}: ${[...names].join(", ")}`);
      ctx.refresh();
    }),
  );
}

/** The server list changed from the one saved when this change's turn comes (see saveSettings). */
function saveServers(services: KryptonServices, change: (servers: McpServerConfig[]) => McpServerConfig[]): Promise<void> {
  return services.saveSettings((current) => ({ mcpServers: change(current.mcpServers) }));
}

function lines(text: string): string[] {
  return text.split("\n").map((l) => l.trim()).filter((l) => l.length > 0);
}

/**
 * Stands in for every header and environment value on screen: all of them are kept as secrets (see
 * persistServerSecrets), so a screen share or a shoulder never sees a token, as with the API key fields.
 */
export const HIDDEN_VALUE = "••••••••";

function formatHidden(map: Record<string, string>, separator: string): string {
  return Object.entries(map).map(([k, v]) => `${k}${separator}${v ? HIDDEN_VALUE : ""}`).join("\n");
}

/** A line still reading HIDDEN_VALUE keeps the value it was shown for; a retyped one replaces it. */
function unhide(typed: Record<string, string>, shown: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(typed).map(([k, v]) => [k, v === HIDDEN_VALUE && shown[k] ? shown[k] : v]));
}

/** A hidden value moved to a name it was not shown under stands for nothing: saving it would store the dots. */
function hiddenValueProblem(s: McpServerConfig): string | undefined {
  const name = [...Object.keys(s.headers).filter((k) => s.headers[k] === HIDDEN_VALUE), ...Object.keys(s.env).filter((k) => s.env[k] === HIDDEN_VALUE)][0];
  return name === undefined ? undefined : `Type the value of ${name}: a hidden value is kept only under the name it was shown with.`;
}

/** "NAME=value" or "Name: value" lines; lines without the separator are ignored. */
export function parsePairs(text: string, separator: "=" | ":"): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines(text)) {
    const at = line.indexOf(separator);
    if (at <= 0) continue;
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/** "Test": connects to the server and shows its tools, or the error with the stderr tail. */
function testButton(b: ButtonComponent, resultEl: HTMLElement, services: KryptonServices, server: McpServerConfig): ButtonComponent {
  return b.setButtonText("Test").onClick(async () => {
    b.setDisabled(true);
    resultEl.show();
    resultEl.setText("Connecting…");
    try {
      showTestResult(resultEl, await services.core.mcp.test(server));
    } finally {
      b.setDisabled(false);
    }
  });
}
