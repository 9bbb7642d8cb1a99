import { z } from "zod";

/**
 * One of the user's MCP servers, in the shape the settings form edits and data.json stores (header and
 * env values are secrets: the Obsidian host moves them to secret storage, see obsidian/host/secret-store.ts).
 */
export interface McpServerConfig {
  /** Unique; the tools appear as "<name>:<tool>". */
  name: string;
  enabled: boolean;
  /** "stdio" starts a local command (desktop and CLI only); "http" is Streamable HTTP with a legacy SSE fallback; "sse" is legacy SSE only. */
  transport: "stdio" | "http" | "sse";
  command: string;
  args: string[];
  /** Added to the SDK's default environment (HOME, PATH, ...). */
  env: Record<string, string>;
  url: string;
  /** Sent with every request ("Authorization": "Bearer ..."). */
  headers: Record<string, string>;
  /** Take PATH from the user's login shell (Obsidian started from the macOS Dock has no npx on its PATH). */
  useLoginShellPath: boolean;
}

export const EMPTY_SERVER: McpServerConfig = {
  name: "",
  enabled: true,
  transport: "stdio",
  command: "",
  args: [],
  env: {},
  url: "",
  headers: {},
  useLoginShellPath: true,
};

/** Server names end up in tool names ("name:tool") and keychain ids: printable, no ":" and not too long. */
const NAME_MAX = 40;

export function serverNameProblem(name: string): string | null {
  if (name.trim() === "") return "a server needs a name";
  if (name !== name.trim()) return `server name "${name}" has leading or trailing spaces`;
  if (name.length > NAME_MAX) return `server name "${name}" is longer than ${NAME_MAX} characters`;
  if (name.includes(":")) return `server name "${name}" may not contain ":" (tools are named "server:tool")`;
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(name)) return `server name "${name}" contains control characters`;
  return null;
}

const stringMap = z.record(z.string(), z.string());

/** One entry of Claude Desktop's "mcpServers" object: a command (stdio) or a URL (HTTP). Unknown keys are ignored. */
const stdioEntry = z.looseObject({
  command: z.string().min(1, "command is empty"),
  args: z.array(z.string(), "args must be a list of strings").optional(),
  env: stringMap.optional(),
  disabled: z.boolean().optional(),
  type: z.literal("stdio").optional(),
  useLoginShellPath: z.boolean().optional(),
});
const httpEntry = z.looseObject({
  url: z.url("url is not a valid URL"),
  headers: stringMap.optional(),
  disabled: z.boolean().optional(),
  type: z.enum(["http", "streamable-http", "streamableHttp", "sse"]).optional(),
});

export class McpConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpConfigError";
  }
}

/**
 * Reads a pasted Claude-Desktop-style block: `{"mcpServers": {"name": {command, args, env} | {url, headers, type}}}`.
 * Also takes the bare inner object (`{"name": {...}}`). Throws McpConfigError naming the server at fault.
 */
export function parseMcpServersJson(text: string): McpServerConfig[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new McpConfigError(`not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new McpConfigError('expected a JSON object like {"mcpServers": {...}}');
  const container = raw as Record<string, unknown>;
  const servers = "mcpServers" in container ? container.mcpServers : container;
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) throw new McpConfigError('"mcpServers" must be an object of servers by name');
  const entries = Object.entries(servers as Record<string, unknown>);
  if (entries.length === 0) throw new McpConfigError('"mcpServers" has no servers');
  return entries.map(([name, entry]) => fromDesktopEntry(name, entry));
}

function fromDesktopEntry(name: string, entry: unknown): McpServerConfig {
  const nameProblem = serverNameProblem(name);
  if (nameProblem) throw new McpConfigError(nameProblem);
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw new McpConfigError(`server "${name}": expected an object with "command" or "url"`);
  const hasCommand = "command" in entry;
  const hasUrl = "url" in entry;
  if (!hasCommand && !hasUrl) throw new McpConfigError(`server "${name}": needs "command" (a local program) or "url" (a remote server)`);
  if (hasCommand && hasUrl) throw new McpConfigError(`server "${name}": has both "command" and "url"; keep one`);
  // The entry as the schema reads it, or zod's first problem as "server "x": path: message".
  const read = <S extends z.ZodType>(schema: S): z.output<S> => {
    const parsed = schema.safeParse(entry);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.map(String).join(".")}: ` : "";
    throw new McpConfigError(`server "${name}": ${where}${issue?.message ?? "invalid entry"}`);
  };
  if (hasCommand) {
    const value = read(stdioEntry);
    return {
      ...EMPTY_SERVER,
      name,
      enabled: value.disabled !== true,
      transport: "stdio",
      command: value.command,
      args: value.args ?? [],
      env: value.env ?? {},
      useLoginShellPath: value.useLoginShellPath ?? true,
    };
  }
  const value = read(httpEntry);
  return {
    ...EMPTY_SERVER,
    name,
    enabled: value.disabled !== true,
    transport: value.type === "sse" ? "sse" : "http",
    url: value.url,
    headers: value.headers ?? {},
    useLoginShellPath: false,
  };
}

/**
 * What keeps a server from being started at all, or null: the one check the settings form, the Test button
 * and every connect make (mcp-connection.ts), in the plugin and the CLI alike. A stored server can still
 * lack a command (a hand-edited data.json); Node would say only "The argument 'file' cannot be empty".
 * Worded to follow "MCP server ", as the CLI's warnings and the log put it.
 */
export function serverStartProblem(server: McpServerConfig): string | null {
  if (server.transport === "stdio" && server.command.trim() === "") return `"${server.name}" has no command`;
  return null;
}

/** The form's check before saving: what is missing or wrong, or null. */
export function serverConfigProblem(server: McpServerConfig, others: readonly McpServerConfig[] = []): string | null {
  const nameProblem = serverNameProblem(server.name);
  if (nameProblem) return nameProblem;
  if (others.some((o) => o.name === server.name)) return `a server named "${server.name}" already exists`;
  if (server.transport === "stdio") {
    const problem = serverStartProblem(server);
    return problem && `MCP server ${problem}`;
  }
  let url: URL;
  try {
    url = new URL(server.url);
  } catch {
    return `server "${server.name}": "${server.url}" is not a valid URL`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `server "${server.name}": the URL must start with http:// or https://`;
  return null;
}

const storedServer = z.object({
  name: z.string(),
  enabled: z.boolean().catch(true),
  transport: z.enum(["stdio", "http", "sse"]).catch("stdio"),
  command: z.string().catch(""),
  args: z.array(z.string()).catch([]),
  env: stringMap.catch({}),
  url: z.string().catch(""),
  headers: stringMap.catch({}),
  useLoginShellPath: z.boolean().catch(true),
});

/** data.json's list, hand-edited or from an older version: keeps every well-formed server, drops the rest and duplicates. */
export function normalizeServers(raw: unknown): McpServerConfig[] {
  if (!Array.isArray(raw)) return [];
  const out: McpServerConfig[] = [];
  for (const item of raw) {
    const parsed = storedServer.safeParse(item);
    if (!parsed.success || serverNameProblem(parsed.data.name) || out.some((s) => s.name === parsed.data.name)) continue;
    out.push(parsed.data);
  }
  return out;
}

/** Back to the Claude Desktop block (for copying out of settings); secret values are included only when asked. */
export function toMcpServersJson(servers: readonly McpServerConfig[], options: { redactSecrets?: boolean } = {}): string {
  const hide = (map: Record<string, string>) =>
    options.redactSecrets ? Object.fromEntries(Object.keys(map).map((k) => [k, "***"])) : map;
  const mcpServers: Record<string, unknown> = {};
  for (const s of servers) {
    const common = s.enabled ? {} : { disabled: true };
    mcpServers[s.name] =
      s.transport === "stdio"
        ? { command: s.command, args: s.args, ...(Object.keys(s.env).length ? { env: hide(s.env) } : {}), ...common }
        : { url: s.url, ...(s.transport === "sse" ? { type: "sse" } : {}), ...(Object.keys(s.headers).length ? { headers: hide(s.headers) } : {}), ...common };
  }
  return JSON.stringify({ mcpServers }, null, 2);
}

/** Values that must never reach a log or a transcript: every header and env value of every server. */
export function serverSecrets(servers: readonly McpServerConfig[]): string[] {
  const values = servers.flatMap((s) => [...Object.values(s.headers), ...Object.values(s.env)]);
  // "Bearer abc": the token alone must also be redacted.
  const tokens = values.flatMap((v) => v.split(/\s+/)).filter((v) => v.length >= 8);
  // Short values ("true", "prod") are not secrets and redacting them would garble every log line.
  return [...new Set([...values, ...tokens])].filter((v) => v.length >= 8);
}
