import { FileSystemAdapter, Platform, Setting } from "obsidian";
import { bridgeUrl, claudeDesktopConfig, claudeDesktopStdioConfig, inspectorCommand, inspectorStdioCommand } from "../mcp/client-config";
import { commitText, copyToClipboard, heading, numberSetting, type SectionContext } from "./setting-controls";

/** MCP bridge (desktop only): on/off, port, token, allowed origins, status and client set-ups. */
export function renderMcpSection(ctx: SectionContext): void {
  const { services } = ctx;
  heading(ctx, "MCP bridge", "Lets MCP clients on this computer (Claude Desktop, MCP Inspector) use Krypton's note tools.");
  if (!Platform.isDesktopApp) {
    new Setting(ctx.containerEl).setDesc("The bridge runs on desktop only.");
    return;
  }
  const s = services.settings();
  new Setting(ctx.containerEl)
    .setName("Enable the bridge")
    .setDesc("Listens on 127.0.0.1 only; every request needs the token below.")
    .addToggle((t) =>
      t.setValue(s.mcpEnabled).onChange(async (on) => {
        await services.saveSettings({ mcpEnabled: on });
        ctx.refresh();
      }),
    );

  const status = new Setting(ctx.containerEl).setName("Bridge status");
  const render = () => {
    status.setDesc(services.bridge.statusLine());
    status.descEl.toggleClass("mod-warning", services.bridge.current().kind === "error");
  };
  render();
  ctx.onHide(services.bridge.onState(render));
  status.addButton((b) =>
    b.setButtonText(services.bridge.isRunning() ? "Restart" : "Start").onClick(async () => {
      if (!services.settings().mcpEnabled) await services.saveSettings({ mcpEnabled: true });
      else await services.bridge.restart();
      ctx.refresh();
    }),
  );

  numberSetting(ctx, "mcpPort", "Port", "Restarts the bridge when changed.", { min: 1024, max: 65_535, integer: true, onLeave: true });

  const token = s.mcpToken;
  new Setting(ctx.containerEl)
    .setName("Token")
    .setDesc(
      services.usesSecretStorage
        ? "Clients send it as \"Authorization: Bearer <token>\". Kept in Obsidian's secret storage."
        : "Clients send it as \"Authorization: Bearer <token>\".",
    )
    .addText((t) => {
      t.setValue(token || "Generated when the bridge is first enabled").setDisabled(true);
      t.inputEl.type = token ? "password" : "text";
      t.inputEl.addClass("krypton-token-input");
    })
    .addExtraButton((b) =>
      b
        .setIcon("copy")
        .setTooltip("Copy token")
        .setDisabled(!token)
        .onClick(() => void copyToClipboard(services.settings().mcpToken, "Token")),
    )
    .addButton((b) =>
      b.setButtonText("Regenerate").onClick(async () => {
        await services.regenerateMcpToken();
        ctx.refresh();
      }),
    );

  new Setting(ctx.containerEl)
    .setName("Allowed browser origins")
    .setDesc("One origin per line (scheme, host and port). Requests from any other web page are refused.")
    .addTextArea((t) => {
      t.setValue(s.mcpAllowedOrigins.join("\n")).setPlaceholder("https://example.app");
      commitText(t, (value) =>
        services.saveSettings({ mcpAllowedOrigins: value.split("\n").map((l) => l.trim()).filter((l) => l.length > 0) }),
      );
    });

  if (token) {
    const state = services.bridge.current();
    const url = state.kind === "running" ? state.url : bridgeUrl(s.mcpPort);
    codeBlock(ctx, "Claude Desktop", "Add to claude_desktop_config.json (uses the mcp-remote adapter; the bridge must be running).", claudeDesktopConfig(url, token), "Configuration");
    codeBlock(ctx, "MCP Inspector", "Lists the tools from a terminal.", inspectorCommand(url, token), "Command");
  }

  // Standalone over stdio: the client starts Krypton's command line itself; no bridge, no token.
  const adapter = services.app.vault.adapter;
  if (!(adapter instanceof FileSystemAdapter)) return;
  const vaultRoot = adapter.getBasePath();
  codeBlock(
    ctx,
    "Standalone MCP server",
    "For Claude Desktop without Obsidian running: add to claude_desktop_config.json. Claude Desktop starts Krypton's command line (krypton mcp) over stdio; needs the krypton command installed, not the bridge.",
    claudeDesktopStdioConfig(vaultRoot),
    "Configuration",
  );
  codeBlock(ctx, "Standalone MCP server check", "Lists the standalone server's tools with the MCP Inspector from a terminal.", inspectorStdioCommand(vaultRoot), "Command");
}

function codeBlock(ctx: SectionContext, name: string, desc: string, code: string, what: string): void {
  const setting = new Setting(ctx.containerEl)
    .setName(name)
    .setDesc(desc)
    .addExtraButton((b) =>
      b
        .setIcon("copy")
        .setTooltip(`Copy ${what.toLowerCase()}`)
        .onClick(() => void copyToClipboard(code, what)),
    );
  setting.settingEl.addClass("krypton-code-setting");
  ctx.containerEl.createEl("pre", { cls: "krypton-code" }).createEl("code", { text: code });
}
