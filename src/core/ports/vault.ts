/** The user's notes. Paths are vault-relative and '/'-separated ("Folder/Note.md"). */
export interface NoteInfo {
  path: string;
  /** Modification time in ms since the epoch. */
  mtime: number;
  size: number;
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

/**
 * Notes as the user sees them. Krypton reads notes and creates new ones; the one change it makes to an
 * existing note is process(), used only on notes Krypton created (flashcard decks) to append.
 * There is deliberately no write, rename or delete here.
 */
export interface VaultPort {
  /** Markdown notes (".md"), excluding the config folder and ".krypton". */
  listNotes(): Promise<NoteInfo[]>;
  /** Throws NoteNotFoundError when there is no such note. */
  readNote(path: string): Promise<string>;
  /** True when any file or folder exists at the path. */
  exists(path: string): Promise<boolean>;
  /** Creates a new note (and missing parent folders). Rejects with NoteExistsError rather than overwrite. */
  createNote(path: string, content: string): Promise<void>;
  /**
   * Atomic read-modify-write of an existing note (Obsidian's Vault.process): fn gets the current text and
   * returns the new one; no other write can land in between. Resolves with the text written.
   * Throws NoteNotFoundError when there is no such note. Callers must only ever append (see flashcards).
   */
  process(path: string, fn: (current: string) => string): Promise<string>;
  /** A file in the config folder ("plugins/x/data.json", relative to configDir), or null when missing. */
  readConfigFile(path: string): Promise<string | null>;
  /** Vault change events; the CLI host may never emit any. */
  onChange(listener: (event: VaultEvent) => void): Unsubscribe;
  /** Obsidian's config folder name (".obsidian" unless the user changed it). */
  readonly configDir: string;
}
