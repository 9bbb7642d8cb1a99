/**
 * Which paths an outside caller (MCP client, script) may name. Pure string rules, the same on every host:
 * vault-relative paths, or absolute paths that lie inside the vault root; nothing that could escape
 * (`..`, other absolute paths, URL-encoding, look-alike Unicode, control characters, backslashes), and
 * nothing in hidden folders (the config folder, .krypton, .git). Symlinks are the host's part: see
 * VaultLocation.assertInside (Node: src/node/path-symlink-guard.ts).
 */
import { clip, utf8Length } from "../util/text";

/** A refused path. The message names the problem and is safe to show. */
export class VaultPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VaultPathError";
  }
}

export interface VaultPathRules {
  /** Obsidian's config folder name (VaultPort.configDir). */
  configDir: string;
  /** Absolute vault root; without it absolute paths are refused. */
  vaultRoot?: string;
  /**
   * What the path is for. "write" (a note or folder Krypton creates, a note it appends to) also refuses the names
   * Windows reserves (CON, AUX, NUL, COM1, …): Windows cannot hold such a file, so a vault synced there would
   * break. "read" takes them: such a note exists on Linux or macOS, and whether Krypton may read it is the read
   * policy's call alone (core/notes/read-policy.ts).
   */
  access: "read" | "write";
}

const MAX_PATH_LENGTH = 1024;
/** File systems limit a name to 255 bytes (ext4, APFS), not characters: 100 CJK characters are 300 bytes. */
const MAX_SEGMENT_BYTES = 255;
const DATA_DIR = ".krypton";
/** Characters Obsidian does not allow in file names (and ':' would open Windows alternate data streams). */
const FORBIDDEN_CHARS = /[*"<>:|?]/;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;
/** Invisible format characters (zero-width, bidi overrides) that make a path look like another. */
const FORMAT_CHARS = /\p{Cf}/u;
const URL_ESCAPE = /%[0-9a-fA-F]{2}/;
/** Slash look-alikes that no Unicode normalization maps to '/', so NFKC alone would not catch them. */
const SLASH_LOOKALIKES = /[\u2215\u2044\u29f8\u29f9\u2216\u2571\u2572\u27cb\u27cd\u1735\u2afb\u2afd]/;
/** Characters a normalizing file system or client could turn into path syntax. */
const PATH_SYNTAX = /[./\\:%]/g;
const FULLWIDTH_COLON = /\uff1a/g;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;
const WINDOWS_DRIVE = /^[A-Za-z]:\//;

/** Checks a client's path and returns it vault-relative and '/'-separated ("Folder/Note.md"). Throws VaultPathError. */
export function toVaultRelativePath(input: unknown, rules: VaultPathRules, what = "path"): string {
  if (typeof input !== "string") throw new VaultPathError(`The ${what} must be a string`);
  if (input.length === 0) throw new VaultPathError(`The ${what} is empty`);
  assertPlainCharacters(input, what);
  if (input.includes("\\")) throw new VaultPathError(`Backslashes are not allowed in the ${what}; use forward slashes: ${show(input)}`);

  let relative = input;
  if (isAbsolutePath(input)) {
    const root = rules.vaultRoot ? normalizeRoot(rules.vaultRoot) : undefined;
    if (!root) throw new VaultPathError(`Absolute paths are not accepted here; use a path relative to the vault: ${show(input)}`);
    const inside = stripRoot(input, root);
    if (inside === undefined) throw new VaultPathError(`The ${what} is outside the vault: ${show(input)}`);
    relative = inside;
  }

  const segments: string[] = [];
  for (const segment of relative.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (/^[. ]+$/.test(segment)) throw new VaultPathError(`'..' and dot-only names are not allowed in the ${what}: ${show(input)}`);
    if (utf8Length(segment) > MAX_SEGMENT_BYTES) throw new VaultPathError(`A name in the ${what} is longer than file systems allow (${MAX_SEGMENT_BYTES} bytes of UTF-8): ${show(segment)}`);
    if (FORBIDDEN_CHARS.test(segment)) throw new VaultPathError(`The ${what} contains a character notes cannot have (* " < > : | ?): ${show(input)}`);
    if (rules.access === "write" && isReservedFileName(segment)) {
      throw new VaultPathError(`'${segment}' is a file name Windows reserves, so Krypton does not create or change it: ${show(input)}`);
    }
    segments.push(segment);
  }
  const first = segments[0];
  if (first !== undefined && first.toLowerCase() === rules.configDir.toLowerCase()) {
    throw new VaultPathError(`The config folder (${rules.configDir}) is off limits: ${show(input)}`);
  }
  if (first !== undefined && first.toLowerCase() === DATA_DIR) {
    throw new VaultPathError(`${DATA_DIR} holds Krypton's index and is off limits: ${show(input)}`);
  }
  const hidden = segments.find((s) => s.startsWith("."));
  if (hidden) throw new VaultPathError(`Hidden files and folders (starting with '.') are off limits: ${show(input)}`);
  return segments.join("/");
}

/** A note's path: like toVaultRelativePath, never the vault root, and ".md" added when it has no extension. */
export function toNotePath(input: unknown, rules: VaultPathRules, what = "path"): string {
  const path = toVaultRelativePath(input, rules, what);
  if (path === "") throw new VaultPathError(`The ${what} names the vault itself, not a note`);
  if (path.toLowerCase().endsWith(".md")) return path;
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (/\.[A-Za-z0-9]{1,8}$/.test(name)) throw new VaultPathError(`Only markdown notes (.md) can be read: ${show(path)}`);
  return `${path}.md`;
}

/** A folder for new notes; "" or "/" is the vault root. */
export function toFolderPath(input: unknown, rules: VaultPathRules, what = "folder"): string {
  if (input === "/" || input === "") return "";
  return toVaultRelativePath(input, rules, what);
}

/**
 * Checks a client's vault_path against the served vault. Both are compared after normalizing and, when
 * the host can, after resolving them on the file system (symlinked vault folders, case on macOS/Windows).
 */
export async function assertSameVault(
  given: unknown,
  location: { root: string; resolve?(absolutePath: string): Promise<string> } | undefined,
): Promise<void> {
  if (typeof given !== "string" || given.trim() === "") throw new VaultPathError("vault_path must be a non-empty string");
  if (!location) {
    throw new VaultPathError("vault_path cannot be checked: this server does not know its vault's location; leave vault_path out");
  }
  assertPlainCharacters(given, "vault_path");
  const unified = given.replace(/\\/g, "/");
  if (!isAbsolutePath(unified)) throw new VaultPathError(`vault_path must be an absolute path, got ${show(given)}`);
  const wanted = normalizeRoot(unified);
  if (wanted === undefined) throw new VaultPathError(`vault_path is not a valid path: ${show(given)}`);
  if (samePath(wanted, normalizeRoot(location.root))) return;
  if (location.resolve) {
    const [realWanted, realServed] = await Promise.all([
      location.resolve(wanted).catch(() => wanted),
      location.resolve(location.root).catch(() => location.root),
    ]);
    if (samePath(normalizeRoot(realWanted), normalizeRoot(realServed))) return;
  }
  throw new VaultPathError(`vault_path does not match the served vault: this server serves ${location.root}, not ${given}`);
}

/** A name Windows refuses whatever its extension ("con.md", "NUL.txt.md", "com1 .md"). */
export function isReservedFileName(name: string): boolean {
  return WINDOWS_RESERVED.test((name.split(".")[0] ?? "").trim());
}

export function isAbsolutePath(path: string): boolean {
  return path.startsWith("/") || WINDOWS_DRIVE.test(path) || /^[A-Za-z]:$/.test(path);
}

/** '/'-separated, no trailing slash, "." and ".." resolved lexically; undefined when ".." climbs above the top. */
function normalizeRoot(root: string): string | undefined {
  const unified = root.replace(/\\/g, "/");
  const drive = /^[A-Za-z]:/.exec(unified)?.[0] ?? "";
  const parts: string[] = [];
  for (const segment of unified.slice(drive.length).split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(segment);
  }
  return `${drive}/${parts.join("/")}`;
}

function samePath(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  // Windows paths are case-insensitive; POSIX ones are compared exactly.
  return /^[A-Za-z]:/.test(a) ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/** The part of an absolute path below the root, or undefined when it is not below it. */
function stripRoot(path: string, root: string): string | undefined {
  const prefix = root.endsWith("/") ? root : `${root}/`;
  const windows = /^[A-Za-z]:/.test(root);
  const head = path.slice(0, prefix.length);
  if (path === root || (windows && path.toLowerCase() === root.toLowerCase())) return "";
  if (head === prefix || (windows && head.toLowerCase() === prefix.toLowerCase())) return path.slice(prefix.length);
  return undefined;
}

function assertPlainCharacters(input: string, what: string): void {
  if (input.length > MAX_PATH_LENGTH) throw new VaultPathError(`The ${what} is longer than ${MAX_PATH_LENGTH} characters`);
  if (CONTROL_CHARS.test(input)) throw new VaultPathError(`The ${what} contains control characters`);
  if (FORMAT_CHARS.test(input)) throw new VaultPathError(`The ${what} contains invisible Unicode characters`);
  if (URL_ESCAPE.test(input)) throw new VaultPathError(`URL-encoded characters (like %2e or %2f) are not accepted in the ${what}; send the plain path`);
  if (SLASH_LOOKALIKES.test(input)) throw new VaultPathError(`The ${what} contains a character that looks like a slash: ${show(input)}`);
  // Full-width dots and slashes, one-dot leaders etc. become '.', '/' under NFKC: refuse rather than guess.
  // The full-width colon is ordinary punctuation in CJK titles ("第一章：导论"), and no file system or
  // client turns it into ':' on the way (NFC/NFD leave it alone): it is not counted.
  const counted = input.replace(FULLWIDTH_COLON, "");
  const syntaxBefore = counted.match(PATH_SYNTAX)?.length ?? 0;
  const syntaxAfter = counted.normalize("NFKC").match(PATH_SYNTAX)?.length ?? 0;
  if (syntaxAfter !== syntaxBefore) throw new VaultPathError(`The ${what} contains look-alike characters for '.', '/' or '\\': ${show(input)}`);
}

function show(path: string): string {
  return JSON.stringify(clip(path, 120));
}
