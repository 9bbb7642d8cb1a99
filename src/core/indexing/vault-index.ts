// STUB: replaced by the indexing work (issue 2).
import type { Embedder } from "../ports/embedder";
import type { Host } from "../ports/host";
import type { KryptonSettings } from "../settings";
import type { VaultIndexApi } from "./vault-index-api";

export interface VaultIndexDeps {
  host: Host;
  settings: () => KryptonSettings;
  embedder: () => Embedder | null;
}

export class VaultIndex implements VaultIndexApi {
  constructor(private readonly deps: VaultIndexDeps) {}
  open(): never { throw new Error("not implemented"); }
  sync(): never { throw new Error("not implemented"); }
  rebuild(): never { throw new Error("not implemented"); }
  handleEvent(): void {}
  idle(): Promise<void> { return Promise.resolve(); }
  status(): never { throw new Error("not implemented"); }
  onStatus(): () => void { return () => {}; }
  chunksOf(): never { throw new Error("not implemented"); }
  close(): Promise<void> { return Promise.resolve(); }
  searchChunks(): never { throw new Error("not implemented"); }
  searchNotes(): never { throw new Error("not implemented"); }
}
