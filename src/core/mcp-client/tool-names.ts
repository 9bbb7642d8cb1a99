/**
 * Names of remote tools. Krypton names them "server:tool" (what the user sees, what presets list); model
 * providers accept only [a-zA-Z0-9_-] up to 64 characters, so each also gets a wire alias "server__tool".
 *
 * The alias is the plain join when that is unambiguous and fits; otherwise it is a cleaned, shortened join
 * plus a hash of the full name, so it depends on the name alone (stable across restarts and servers'
 * order) and two different names never share an alias. `assignWireNames` settles the last, theoretical
 * case (a literal tool name that equals another's hashed alias) in sorted order, still deterministic.
 */
export const WIRE_NAME_MAX = 64;
const SAFE = /^[A-Za-z0-9_-]+$/;
/** A server name that cannot make "a__b" + "c" look like "a" + "b__c". */
const SAFE_SERVER = /^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$/;

export function qualifiedToolName(server: string, tool: string): string {
  return `${server}:${tool}`;
}

export function wireNameFor(server: string, tool: string): string {
  const plain = `${server}__${tool}`;
  if (SAFE_SERVER.test(server) && SAFE.test(tool) && plain.length <= WIRE_NAME_MAX) return plain;
  const hash = fnv1a(qualifiedToolName(server, tool));
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^_+|_+$/g, "");
  const prefix = `${clean(server) || "mcp"}__${clean(tool) || "tool"}`.slice(0, WIRE_NAME_MAX - hash.length - 1);
  return `${prefix}_${hash}`;
}

/** Wire names for a set of qualified tools; unique even in the pathological case described above. */
export function assignWireNames(tools: readonly { server: string; tool: string }[]): Map<string, string> {
  const out = new Map<string, string>();
  const taken = new Set<string>();
  const sorted = [...tools].sort((a, b) => compare(qualifiedToolName(a.server, a.tool), qualifiedToolName(b.server, b.tool)));
  for (const { server, tool } of sorted) {
    let wire = wireNameFor(server, tool);
    for (let n = 2; taken.has(wire); n++) {
      const suffix = `_${n}`;
      wire = `${wireNameFor(server, tool).slice(0, WIRE_NAME_MAX - suffix.length)}${suffix}`;
    }
    taken.add(wire);
    out.set(qualifiedToolName(server, tool), wire);
  }
  return out;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** 32-bit FNV-1a as 8 hex digits: tiny, deterministic, no crypto API needed on any platform. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}
