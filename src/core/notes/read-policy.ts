import { NoteChangedError, type NoteInfo, type Unsubscribe, type VaultEvent, type VaultPort } from "../ports/vault";
import { createExclusionFilter } from "../indexing/exclusions";

/**
 * THE rule for what Krypton may read, used by every host and every path (index, search results, RAG
 * context, agents, summaries, MCP/CLI tools, commands): a note is off limits when
 *  - it lies in Obsidian's config folder or in `.krypton`,
 *  - it matches one of the user's exclude patterns. Matching ignores case, for the index and the tools
 *    alike: on macOS and Windows "private/x.md" and "Private/x.md" are the same file, and a pattern the user
 *    wrote to keep a folder out must not be bypassed by spelling its name differently;
 *  - it is a symbolic link that leads outside the vault, or nowhere (its target missing, or a loop): the vault
 *    adapter knows the real path and refuses it with NoteRefusedError (FsVault on Node);
 *  - its content is not text (binary bytes in a ".md" file), is UTF-16 text, or is larger than MAX_NOTE_BYTES
 *    (decodeNoteBytes, called by both vault adapters when they read; notTextReason).
 * A folder is listed unless a rule takes it whole (mayListFolder); hidden folders and links to folders the
 * vault adapters never list.
 * Hosts get this by reading through `policedVault`, which createKrypton installs for the whole core.
 */

/** Notes larger than this are not read (a 20 MB ".md" is an export or a dump, not a note). */
export const MAX_NOTE_BYTES = 8 * 1024 * 1024;

/** A note Krypton must not read; the message names the note and the reason and is safe to show. */
export class NoteRefusedError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path} is not read: ${reason}`);
    this.name = "NoteRefusedError";
  }
}

export function isNoteRefusedError(err: unknown): err is NoteRefusedError {
  return err instanceof NoteRefusedError || (err as Error | null)?.name === "NoteRefusedError";
}

export interface ReadPolicySettings {
  excludePatterns: readonly string[];
}

export interface ReadPolicy {
  /** Why the path is off limits, or undefined when Krypton may read it. */
  refusal(path: string): string | undefined;
  mayRead(path: string): boolean;
  /**
   * Whether Krypton may see a folder (VaultPort.listFolders): not when a rule takes it whole, the folder and what
   * is in it ("Private", the config folder). A folder only some of whose notes are refused ("Daily/*") is seen:
   * its name only tells where the settings' folders are (folderAsSpelled), never what a note says.
   */
  mayListFolder(path: string): boolean;
  /** Throws NoteRefusedError when the path is off limits. */
  assertMayRead(path: string): void;
}

export function createReadPolicy(settings: ReadPolicySettings, configDir: string): ReadPolicy {
  const fixed = createExclusionFilter([], configDir.toLowerCase());
  const user = createExclusionFilter(
    settings.excludePatterns.map((p) => p.toLowerCase()),
    configDir.toLowerCase(),
  );
  const refusal = (path: string): string | undefined => {
    const folded = path.toLowerCase();
    if (fixed(folded)) return folded.startsWith(".krypton") ? "it is in .krypton (Krypton's index)" : `it is in the config folder (${configDir})`;
    if (user(folded)) return "it matches your exclude patterns (Settings → Index)";
    return undefined;
  };
  return {
    refusal,
    mayRead: (path) => refusal(path) === undefined,
    // Taken whole: a note in it and a note in a folder below it are both refused, probed under a name no rule
    // can name (no file name holds a NUL). "Private", "Archive/**" and "**/secret/**" take their folder whole;
    // "Daily/*" refuses only Daily's own notes and "Daily/2023-*" only names, so notes below stay readable.
    mayListFolder: (path) => refusal(`${path}/\0.md`) === undefined || refusal(`${path}/\0/\0.md`) === undefined,
    assertMayRead(path) {
      const why = refusal(path);
      if (why) throw new NoteRefusedError(path, why);
    },
  };
}

/**
 * When the exclude patterns leave none of these notes readable while the fixed rules (config folder,
 * .krypton) would leave some: the patterns that take at least one of them, in the settings' order. Null
 * otherwise (a note stays readable, or there is no note to exclude).
 */
export function patternsTakingEveryNote(paths: readonly string[], settings: ReadPolicySettings, configDir: string): string[] | null {
  const fixed = createReadPolicy({ excludePatterns: [] }, configDir);
  const notes = paths.filter((path) => fixed.mayRead(path));
  if (notes.length === 0) return null;
  const policy = createReadPolicy(settings, configDir);
  if (notes.some((path) => policy.mayRead(path))) return null;
  return settings.excludePatterns.filter((pattern) => {
    const one = createReadPolicy({ excludePatterns: [pattern] }, configDir);
    return notes.some((path) => !one.mayRead(path));
  });
}

/**
 * The vault as the core sees it: listNotes and listFolders leave out what the policy refuses, readNote refuses it with
 * NoteRefusedError. Settings are read at each call, so a changed exclude list applies at once.
 */
export function policedVault(vault: VaultPort, settings: () => ReadPolicySettings): VaultPort {
  const policy = () => createReadPolicy(settings(), vault.configDir);
  let everyNoteExcludedBy: string[] | null = null;
  return {
    get configDir() {
      return vault.configDir;
    },
    async listNotes(): Promise<NoteInfo[]> {
      const s = settings();
      const p = createReadPolicy(s, vault.configDir);
      const all = await vault.listNotes();
      const kept = all.filter((n) => p.mayRead(n.path));
      // Only this layer sees the notes it leaves out: an exclude list that takes them all is told, not silent.
      everyNoteExcludedBy = kept.length === 0 ? patternsTakingEveryNote(all.map((n) => n.path), s, vault.configDir) : null;
      return kept;
    },
    everyNoteExcludedBy: () => everyNoteExcludedBy,
    async listFolders(parent: string): Promise<string[]> {
      const p = policy();
      return (await vault.listFolders(parent)).filter((name) => p.mayListFolder(parent ? `${parent}/${name}` : name));
    },
    // A folder the user keeps out of Krypton is not named either.
    skippedFolders: () => {
      const p = policy();
      return (vault.skippedFolders?.() ?? []).filter((f) => p.mayListFolder(f.path));
    },
    async readNote(path: string): Promise<string> {
      policy().assertMayRead(path);
      return vault.readNote(path);
    },
    // Appending reads the note first (the diff the user approves): the same rule applies.
    async appendToNote(path: string, text: string, expected?: string): Promise<void> {
      policy().assertMayRead(path);
      return vault.appendToNote(path, text, expected);
    },
    async processNote(path: string, fn: (current: string) => string, expected?: string): Promise<void> {
      policy().assertMayRead(path);
      return vault.processNote(path, fn, expected);
    },
    exists: (path) => vault.exists(path),
    createNote: (path, content) => vault.createNote(path, content),
    // Settings of other plugins (the Spaced Repetition plugin's separators), never a note.
    readConfigFile: (path) => vault.readConfigFile(path),
    onChange: (listener: (event: VaultEvent) => void): Unsubscribe => vault.onChange(listener),
  };
}

// ------------------------------------------------------------------------------------------ content

/**
 * A note's bytes as text, for both vault adapters: UTF-8 (a BOM dropped) when the bytes are valid UTF-8,
 * else windows-1252 (Latin-1 plus the curly quotes and € of old Windows editors), so notes written by older
 * tools stay readable and searchable. Binary content (NUL bytes, an image's magic number, mostly control
 * characters), UTF-16 text and notes over MAX_NOTE_BYTES are refused with NoteRefusedError.
 */
export function decodeNoteBytes(path: string, bytes: Uint8Array): string {
  return utf8Note(path, bytes) ?? new TextDecoder("windows-1252").decode(bytes);
}

/**
 * A note's bytes as text for a write (an append or a process): what decodeNoteBytes refuses, and also a note
 * that is not UTF-8: it was read through the Latin-1 fallback, and writing text back would re-encode the
 * whole note. Both vault adapters decode a note this way before they change it.
 */
export function decodeWritableNote(path: string, bytes: Uint8Array): string {
  const text = utf8Note(path, bytes);
  if (text === null) {
    throw new NoteRefusedError(path, "it is not UTF-8 text (Latin-1/Windows-1252), and Krypton does not re-encode a note to append to it");
  }
  return text;
}

/**
 * The refusals both decodings share (too large, binary), then the note as UTF-8 without its BOM, or null when
 * the bytes are not valid UTF-8. One strict decode: it both checks the bytes and gives the text.
 */
function utf8Note(path: string, bytes: Uint8Array): string | null {
  if (bytes.length > MAX_NOTE_BYTES) {
    throw new NoteRefusedError(path, `it is larger than ${Math.round(MAX_NOTE_BYTES / 1024 / 1024)} MB`);
  }
  const notText = notTextReason(bytes);
  if (notText) throw new NoteRefusedError(path, notText);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  return withoutByteOrderMark(text);
}

/** U+FEFF at the start of a note: decodeNoteBytes drops it, and a write puts back the one the note had (rewrittenNote). */
const BYTE_ORDER_MARK = "\uFEFF";

/**
 * Text without its leading byte order mark: what a note (decodeNoteBytes) and a config file (readConfigFile,
 * on both hosts) read as. Windows editors save JSON with one, and JSON.parse refuses it.
 */
export function withoutByteOrderMark(text: string): string {
  return text.startsWith(BYTE_ORDER_MARK) ? text.slice(1) : text;
}

/** True when the bytes start with a UTF-8 byte order mark. */
export function hasByteOrderMark(bytes: Uint8Array): boolean {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/**
 * A note's new text for a write (processNote, on both hosts): `fn` of the current text as readNote gives it
 * (without a byte order mark), refused with NoteChangedError when that is not `expected`; the note keeps its
 * byte order mark (`hadByteOrderMark`), once.
 */
export function rewrittenNote(
  path: string,
  current: string,
  hadByteOrderMark: boolean,
  fn: (current: string) => string,
  expected: string | undefined,
): string {
  if (expected !== undefined && current !== expected) throw new NoteChangedError(path);
  return (hadByteOrderMark ? BYTE_ORDER_MARK : "") + fn(current);
}

const MAGIC: [string, number[]][] = [
  ["PNG image", [0x89, 0x50, 0x4e, 0x47]],
  ["JPEG image", [0xff, 0xd8, 0xff]],
  ["GIF image", [0x47, 0x49, 0x46, 0x38]],
  ["PDF document", [0x25, 0x50, 0x44, 0x46, 0x2d]],
  ["ZIP archive", [0x50, 0x4b, 0x03, 0x04]],
  ["gzip archive", [0x1f, 0x8b]],
];

/**
 * Why the bytes are not a note Krypton reads as text, or undefined for text: the one rule for binary content.
 * UTF-16 (told by its byte order mark) is text, but Obsidian reads notes as UTF-8 and shows it garbled:
 * indexing it would show the user text Obsidian does not, and a write would re-encode it, so it is refused
 * too, saying what it is and what to do. Looks at the first 8 KB, like git and grep.
 */
function notTextReason(bytes: Uint8Array): string | undefined {
  if (isUtf16(bytes)) return "it is UTF-16 text: Krypton and Obsidian read notes as UTF-8; save it as UTF-8 to index it";
  const binary = binaryKind(bytes);
  return binary ? `it is a binary file (${binary}), not a text note` : undefined;
}

/** A UTF-16 byte order mark, little- or big-endian (FF FE 00 00 is UTF-32's, left to binaryKind's NUL rule). */
function isUtf16(bytes: Uint8Array): boolean {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return true;
  return bytes[0] === 0xff && bytes[1] === 0xfe && !(bytes[2] === 0 && bytes[3] === 0);
}

/** What kind of binary the bytes are, or undefined for text. */
function binaryKind(bytes: Uint8Array): string | undefined {
  for (const [name, magic] of MAGIC) if (magic.every((b, i) => bytes[i] === b)) return name;
  const head = bytes.subarray(0, 8192);
  if (head.length === 0) return undefined;
  let control = 0;
  for (const b of head) {
    if (b === 0) return "NUL bytes";
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c && b !== 0x1b) control++;
  }
  return control / head.length > 0.1 ? "control characters" : undefined;
}
