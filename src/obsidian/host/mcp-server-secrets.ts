import type { McpServerConfig } from "../../core/mcp-client/server-config";

/** The part of Obsidian's SecretStorage used here (see secret-store.ts). */
interface Storage {
  getSecret(id: string): string | null;
  setSecret(id: string, secret: string): void;
}

interface ServerSecrets {
  headers: Record<string, string>;
  env: Record<string, string>;
}

/**
 * Keychain id of one server's secrets: lowercase letters, digits and dashes (the API's rule), from the
 * name plus a hash so "My Server" and "my-server" never share one.
 */
export function serverSecretId(name: string): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 30) || "server";
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return `krypton-mcp-server-${slug}-${hash.toString(16).padStart(8, "0")}`;
}

const hasValues = (map: Record<string, string>) => Object.values(map).some((v) => v !== "");
const blank = (map: Record<string, string>) => Object.fromEntries(Object.keys(map).map((k) => [k, ""]));

/**
 * Fills each server's header and env values from secret storage (data.json keeps the names with empty
 * values). Values still found in data.json are moved into the keychain: `migrated` asks for a save.
 */
export function hydrateServerSecrets(servers: readonly McpServerConfig[], storage: Storage): { servers: McpServerConfig[]; migrated: boolean } {
  let migrated = false;
  const out = servers.map((server) => {
    const stored = read(storage, server.name);
    const headers = { ...server.headers };
    const env = { ...server.env };
    if (stored) {
      for (const [k, v] of Object.entries(stored.headers)) if (k in headers && !headers[k]) headers[k] = v;
      for (const [k, v] of Object.entries(stored.env)) if (k in env && !env[k]) env[k] = v;
    }
    if (hasValues(server.headers) || hasValues(server.env)) migrated = true;
    return { ...server, headers, env };
  });
  return { servers: out, migrated };
}

/**
 * Stores each server's secrets and returns the servers as data.json may hold them (names kept, values empty).
 * `dropped` are names the list no longer has (a server removed or renamed): their entries are cleared.
 */
export function persistServerSecrets(servers: readonly McpServerConfig[], storage: Storage, dropped: Iterable<string> = []): McpServerConfig[] {
  for (const name of dropped) forget(storage, name);
  return servers.map((server) => {
    if (!hasValues(server.headers) && !hasValues(server.env)) {
      forget(storage, server.name); // its last value was removed: the keychain must not keep it
      return server;
    }
    const value = JSON.stringify({ headers: server.headers, env: server.env } satisfies ServerSecrets);
    try {
      if (storage.getSecret(serverSecretId(server.name)) !== value) storage.setSecret(serverSecretId(server.name), value);
    } catch {
      return server; // a keychain that refuses it: data.json keeps the values rather than losing them
    }
    return { ...server, headers: blank(server.headers), env: blank(server.env) };
  });
}

/** SecretStorage has no delete: an empty secret reads as none (see read). */
function forget(storage: Storage, name: string): void {
  try {
    if (storage.getSecret(serverSecretId(name))) storage.setSecret(serverSecretId(name), "");
  } catch {
    // a keychain that refuses: nothing of this server is in data.json either way
  }
}

function read(storage: Storage, name: string): ServerSecrets | null {
  try {
    const raw = storage.getSecret(serverSecretId(name));
    if (!raw) return null;
    const parsed = JSON.parse(raw) as Partial<ServerSecrets>;
    return { headers: parsed.headers ?? {}, env: parsed.env ?? {} };
  } catch {
    return null;
  }
}
