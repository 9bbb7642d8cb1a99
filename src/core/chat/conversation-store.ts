// STUB: replaced by the chat-core work (issue 3).
import type { Clock } from "../ports/clock";
import type { DataDirPort } from "../ports/data-dir";
import type { Logger } from "../ports/logger";
import type { ConversationStoreApi } from "./conversation-types";

export class ConversationStore implements ConversationStoreApi {
  constructor(private readonly data: DataDirPort, private readonly clock: Clock, private readonly logger: Logger) {}
  list(): never { throw new Error("not implemented"); }
  get(): never { throw new Error("not implemented"); }
  create(): never { throw new Error("not implemented"); }
  put(): never { throw new Error("not implemented"); }
  removeMessage(): never { throw new Error("not implemented"); }
  rename(): never { throw new Error("not implemented"); }
  delete(): never { throw new Error("not implemented"); }
  search(): never { throw new Error("not implemented"); }
  problems(): string[] { return []; }
}
