/**
 * Krypton's machine state under "<vault>/.krypton/". Paths are relative to that folder, '/'-separated.
 * Every write is atomic (temp file + rename) so a crash never leaves a half-written file.
 */
export interface DataDirPort {
  /**
   * Null when the file does not exist. With a range, only those bytes (fewer at the end of the file): the
   * index reads a shard's search part at load and its chunk texts only when a hit needs them.
   */
  read(path: string, range?: ByteRange): Promise<Uint8Array | null>;
  /**
   * Reads `target.length` bytes from `offset` straight into `target` (the vector store's memory: no copy);
   * returns how many arrived (fewer at the end of the file), or null when the file does not exist.
   * Optional: without it, read() and a copy.
   */
  readInto?(path: string, offset: number, target: Uint8Array): Promise<number | null>;
  readText(path: string): Promise<string | null>;
  writeAtomic(path: string, data: Uint8Array | string): Promise<void>;
  /** Creates the file only if it does not exist yet; false when it already existed (used for locks). */
  createExclusive(path: string, data: string): Promise<boolean>;
  /** No error when the file is already gone. An empty folder is removed too; a non-empty one is an error. */
  remove(path: string): Promise<void>;
  /** File names directly inside a folder; empty when the folder does not exist. */
  list(dir: string): Promise<string[]>;
  /** Size in bytes, or null when missing (a shard read in part is checked for truncation with it). */
  size(path: string): Promise<number | null>;
  /** Modification time in ms, or null when missing. */
  mtime(path: string): Promise<number | null>;
  /** What is at a path: a file, a folder, or nothing (lets the index lock spot damage such as a folder named like a file). */
  kind?(path: string): Promise<"file" | "dir" | null>;
}

export interface ByteRange {
  offset: number;
  length: number;
}

/**
 * Why the data folder cannot be written: `why` in words ("permission denied"), or a file standing where a
 * folder must be (a note named ".krypton"). Both hosts' data dirs say it this way; the index shows it as the
 * status's writeError.
 */
export function dataDirWriteError(dataDir: string, why: { fileInTheWay: string } | string): Error {
  const words = typeof why === "string" ? why : `${why.fileInTheWay === dataDir ? "it" : why.fileInTheWay} is a file, not a folder: move or rename it`;
  return new Error(`cannot write ${dataDir} (${words})`);
}

/**
 * A folder where Krypton keeps one of its files (say `.krypton/index/manifest.json` made a folder by hand or by a
 * sync tool). Both hosts' data dirs say it this way, naming that path (not a temp file) and what to do. The rule
 * they share: an empty folder there holds nothing and is removed by a write (never recursively); one with files
 * in it is never removed, and a write fails with this error (`writing`). A read says it is a folder.
 */
export class FolderInTheWayError extends Error {
  readonly code = "EISDIR";
  // `folder`, not `path`: an error with a code and a path reads as Node's own to the CLI, which words it anew.
  constructor(
    readonly folder: string,
    readonly writing: boolean,
  ) {
    super(writing ? `cannot write ${folder}: it is a folder with files in it, where Krypton keeps a file; move or remove that folder` : `${folder} is a folder, not a file`);
    this.name = "FolderInTheWayError";
  }
}
