/** Bytes of randomness in a generated bridge token (256 bits; the floor is 128). */
const TOKEN_BYTES = 32;
/** Shortest token the bridge accepts, so a hand-typed "1234" never guards a vault. */
export const MIN_MCP_TOKEN_LENGTH = 16;

/**
 * A new bearer token for the MCP bridge: random bytes from the platform's CSPRNG (crypto.getRandomValues,
 * present in Obsidian and Node 20), base64url without padding, 43 characters. Runs on every host.
 */
export function generateMcpToken(): string {
  const bytes = new Uint8Array(TOKEN_BYTES);
  crypto.getRandomValues(bytes);
  return toBase64Url(bytes);
}

/** Why a token cannot be used, or null when it can. Never echoes the token. */
export function mcpTokenProblem(token: string | undefined | null): string | null {
  if (!token || token.trim() === "") return "An MCP bridge token is required (the bridge never runs without authentication)";
  if (token.length < MIN_MCP_TOKEN_LENGTH) return `The MCP bridge token must be at least ${MIN_MCP_TOKEN_LENGTH} characters; generate a new one`;
  if (!/^[\x21-\x7e]+$/.test(token)) return "The MCP bridge token may only contain visible ASCII characters";
  return null;
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

function toBase64Url(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    for (let j = 0; j < chars; j++) out += ALPHABET[(n >> (18 - 6 * j)) & 63];
  }
  return out;
}
