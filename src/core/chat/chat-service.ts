// STUB: replaced by the chat-core work (issue 3).
import type { Agent } from "../agents/agent";
import type { VaultIndexApi } from "../indexing/vault-index-api";
import type { ChatModel } from "../ports/chat-model";
import type { Host } from "../ports/host";
import type { KryptonSettings } from "../settings";
import type { ChatEvent, ChatServiceApi, SendOptions } from "./chat-types";
import type { ConversationStoreApi } from "./conversation-types";

export interface ChatServiceDeps {
  host: Host;
  settings: () => KryptonSettings;
  index: VaultIndexApi;
  chatModel: () => ChatModel | null;
  conversations: ConversationStoreApi;
  agents: () => Agent[];
}

export class ChatService implements ChatServiceApi {
  constructor(private readonly deps: ChatServiceDeps) {}
  // eslint-disable-next-line require-yield -- stub until the chat pipeline lands
  async *send(_message: string, _options: SendOptions): AsyncIterable<ChatEvent> {
    throw new Error("not implemented");
  }
}
