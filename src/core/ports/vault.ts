/** The user's notes. Paths are vault-relative and '/'-separated ("Folder/Note.md"). */
export interface NoteInfo {
  path: string;
  /** Modification time in ms since the epoch. */
  mtime: number;
  size: number;
}

/** A folder a vault listing did not go into, and why in a few words (FsVault: a symbolic link to a folder). */
export interface SkippedFolder {
  path: string;
  reason: string;
}

export type VaultEvent =
  | { type: "create" | "modify" | "delete"; path: string }
  | { type: "rename"; path: string; oldPath: string };

export type Unsubscribe = () => void;

export class NoteNotFoundError extends Error {
  constructor(readonly path: string) {
    super(`Note not found: ${path}`);
    this.name = "NoteNotFoundError";
  }
}

export class NoteExistsError extends Error {
  constructor(readonly path: string) {
    super(`A file already exists at ${path}`);
    this.name = "NoteExistsError";
  }
}

/** The note changed between the preview the user approved and the write: nothing was written. */
export class NoteChangedError extends Error {
  constructor(readonly path: string) {
    super(`${path} changed since the preview you approved; nothing was appended. Ask again to see the new diff.`);
    this.name = "NoteChangedError";
  }
}

/**
 * Notes as the user sees them. Krypton reads notes, creates new ones and, only after the user approved
 * the diff, appends to one; notes Krypton itself manages (goal notes) it may also rewrite in one atomic step.
 * There is deliberately no overwrite, rename or delete here.
 */
export interface VaultPort {
  /** Markdown notes (".md"), excluding the config folder and ".krypton". */
  listNotes(): Promise<NoteInfo[]>;
  /**
   * The folders the last listNotes did not go into although they hold notes for the user, and why: on Node, the
   * symbolic links to folders (inside the vault or leading out of it). Without it (Obsidian lists its own
   * files), none. Listing them changes nothing that is read: the index only says them among its skipped notes.
   */
  skippedFolders?(): readonly SkippedFolder[];
  /**
   * After listNotes: when the vault has notes but the user's exclude patterns leave none of them, the
   * patterns that take them (patternsTakingEveryNote); otherwise null. Set by the read policy (policedVault).
   */
  everyNoteExcludedBy?(): readonly string[] | null;
  /**
   * The names of the folders directly in `parent` ("" for the vault root), as the vault spells them, empty ones
   * included: the folders listNotes finds notes in (no hidden folder, nothing through a symbolic link that
   * leads out of the vault; Node lists no link to a folder at all). [] when `parent` is no such folder. One
   * folder, not a walk: folderAsSpelled asks level by level. The config folder and excluded folders are left
   * out by the read policy (policedVault).
   */
  listFolders(parent: string): Promise<string[]>;
  /** Throws NoteNotFoundError when there is no such note. */
  readNote(path: string): Promise<string>;
  /** True when any file or folder exists at the path. */
  exists(path: string): Promise<boolean>;
  /** Creates a new note (and missing parent folders). Rejects with NoteExistsError rather than overwrite. */
  createNote(path: string, content: string): Promise<void>;
  /**
   * Appends text to an existing note in one atomic step (Obsidian: Vault.process; Node: temp file + rename).
   * `expected` is the content the user approved the change against: when the note differs now, rejects
   * with NoteChangedError and writes nothing. NoteNotFoundError when there is no such note.
   */
  appendToNote(path: string, text: string, expected?: string): Promise<void>;
  /**
   * Atomic read-modify-write of a note Krypton manages (today: study-goal notes, to keep their `minutes` line
   * in step with their sessions). `fn` gets the current text and returns the new one; when it throws, nothing
   * is written and the error reaches the caller. Same atomicity, `expected` and NoteNotFoundError rules as
   * appendToNote. Callers must check inside `fn` that the note is theirs (a marker), never touch a user's note.
   */
  processNote(path: string, fn: (current: string) => string, expected?: string): Promise<void>;
  /**
   * A file in the config folder ("plugins/x/data.json", relative to configDir) as UTF-8 text without a byte order
   * mark (withoutByteOrderMark), or null when missing; throws when it is there but cannot be read. Read-only.
   */
  readConfigFile(path: string): Promise<string | null>;
  /** Vault change events; the CLI host may never emit any. */
  onChange(listener: (event: VaultEvent) => void): Unsubscribe;
  /** Obsidian's config folder name (".obsidian" unless the user changed it). */
  readonly configDir: string;
}
