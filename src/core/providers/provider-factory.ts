// STUB: replaced by the chat-core work (issue 3).
import type { ChatModel } from "../ports/chat-model";
import type { Embedder } from "../ports/embedder";
import type { Host } from "../ports/host";
import type { KryptonSettings } from "../settings";

export function createChatModel(_settings: KryptonSettings, _host: Host): ChatModel | null {
  return null;
}
export function createEmbedder(_settings: KryptonSettings, _host: Host): Embedder | null {
  return null;
}
