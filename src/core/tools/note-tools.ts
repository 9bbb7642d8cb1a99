// STUB: replaced by the MCP work (issue 6).
import type { NoteOperations } from "../agents/note-operations";
import type { VaultPort } from "../ports/vault";
import type { ToolRegistry } from "./tool-registry";

export function registerNoteTools(_registry: ToolRegistry, _deps: { operations: NoteOperations; vault: VaultPort }): void {}
