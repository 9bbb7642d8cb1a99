import type { App } from "obsidian";
import { SECRET_FIELDS, type KryptonSettings } from "../../core/settings";
import { hydrateServerSecrets, persistServerSecrets } from "./mcp-server-secrets";

export type SecretField = (typeof SECRET_FIELDS)[number];

/** Ids in Obsidian's keychain (lowercase letters, digits and dashes, as the API requires). */
export const SECRET_IDS: Record<SecretField, string> = {
  geminiApiKey: "krypton-gemini-api-key",
  tavilyApiKey: "krypton-tavily-api-key",
  mcpToken: "krypton-mcp-token",
};

/** The part of Obsidian's SecretStorage (1.11.4+) Krypton uses. */
export interface SecretStorageLike {
  getSecret(id: string): string | null;
  setSecret(id: string, secret: string): void;
}

/** app.secretStorage when the running Obsidian has it (feature-detected: minAppVersion is older). */
export function detectSecretStorage(app: App): SecretStorageLike | null {
  const candidate = (app as unknown as { secretStorage?: Partial<SecretStorageLike> }).secretStorage;
  if (candidate && typeof candidate.getSecret === "function" && typeof candidate.setSecret === "function") {
    return candidate as SecretStorageLike;
  }
  return null;
}

/**
 * Where API keys and the MCP token live. With secret storage, data.json keeps those fields empty and the
 * values stay in Obsidian's keychain (encrypted by the OS, not synced with the vault). Without it, they
 * stay in data.json as before. Values are never logged.
 */
export class SecretStore {
  /**
   * The MCP server names last read from or written to data.json. A name that leaves the list between two
   * saves was removed or renamed here, so its keychain entry is Krypton's and unused: persist clears it.
   * Entries of names never seen in this session (a server removed on another device) are left alone: an
   * id is a one-way hash of the name, so nothing proves such an entry is this vault's and unused.
   */
  private serverNames = new Set<string>();

  constructor(private readonly storage: SecretStorageLike | null) {}

  get inSecretStorage(): boolean {
    return this.storage !== null;
  }

  /**
   * Fills the secret fields of settings read from data.json. A key found in data.json while secret storage
   * exists (an older Krypton, or an Obsidian update) is moved into secret storage: `migrated` tells the
   * caller to save data.json so the plain copy disappears.
   */
  hydrate(fromDisk: KryptonSettings): { settings: KryptonSettings; migrated: boolean } {
    if (!this.storage) return { settings: fromDisk, migrated: false };
    const settings = { ...fromDisk };
    let migrated = false;
    for (const field of SECRET_FIELDS) {
      const stored = this.get(field);
      const plain = fromDisk[field];
      if (stored) settings[field] = stored;
      else if (plain) {
        settings[field] = plain;
        // A keychain that refuses the key (locked, unavailable) leaves it in data.json rather than losing it.
        if (!this.set(field, plain)) continue;
      }
      if (plain) migrated = true;
    }
    // MCP servers' header and env values (bearer tokens, API keys) live there too.
    const servers = hydrateServerSecrets(fromDisk.mcpServers, this.storage);
    this.serverNames = new Set(fromDisk.mcpServers.map((s) => s.name));
    settings.mcpServers = servers.servers;
    return { settings, migrated: migrated || servers.migrated };
  }

  /** Stores the secrets and returns what may be written to data.json. */
  persist(settings: KryptonSettings): KryptonSettings {
    if (!this.storage) return settings;
    const onDisk = { ...settings };
    for (const field of SECRET_FIELDS) {
      const saved = this.get(field) === settings[field] || this.set(field, settings[field]);
      // Only a key the keychain really holds leaves data.json; otherwise data.json keeps it (as without secret storage).
      if (saved) onDisk[field] = "";
    }
    const names = new Set(settings.mcpServers.map((s) => s.name));
    const dropped = [...this.serverNames].filter((name) => !names.has(name));
    this.serverNames = names;
    onDisk.mcpServers = persistServerSecrets(settings.mcpServers, this.storage, dropped);
    return onDisk;
  }

  private get(field: SecretField): string {
    try {
      return this.storage?.getSecret(SECRET_IDS[field]) ?? "";
    } catch {
      return "";
    }
  }

  private set(field: SecretField, value: string): boolean {
    try {
      this.storage?.setSecret(SECRET_IDS[field], value);
      return true;
    } catch {
      return false;
    }
  }

}
