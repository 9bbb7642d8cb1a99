/**
 * What the index lock needs to know about processes, so a lock tells the truth about its holder: who this
 * process is (recorded in a lock it takes), whether another one still runs, and a way to drop a lock when
 * this process dies. Hosts without processes (Obsidian mobile) leave the port out; the lock then falls back
 * to its heartbeat timestamp.
 */
export interface ProcessPort {
  readonly pid: number;
  /** The machine's name: a pid means something only on the machine that recorded it. */
  readonly hostName: string;
  /** What holds a lock, in words: "krypton index", "krypton mcp", "Obsidian". */
  readonly label: string;
  /** True/false for a process with this pid on this machine; null when the host cannot tell. */
  isAlive(pid: number): boolean | null;
  /**
   * Removes the Krypton data file `path` when this process ends (exit, fatal error, SIGTERM, SIGHUP) if it
   * still contains `owner`. Returns the function that cancels it (the lock calls it on a normal release).
   */
  releaseOnExit(path: string, owner: string): () => void;
}
