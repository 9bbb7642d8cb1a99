import type { ChatMessage } from "../ports/chat-model";
import type { KryptonSettings } from "../settings";

/**
 * How much conversation history goes into the prompt: the newest messages first, until either the
 * message count or the character budget is reached. Small local models have small context windows,
 * and mobile devices run them slower still, hence separate (smaller) mobile bounds.
 */
export class ConversationMemoryPolicy {
  constructor(
    readonly maxMessages: number,
    readonly maxChars: number,
  ) {}

  static fromSettings(settings: KryptonSettings, mobile: boolean): ConversationMemoryPolicy {
    return mobile
      ? new ConversationMemoryPolicy(settings.mobileMemoryMaxMessages, settings.mobileMemoryMaxChars)
      : new ConversationMemoryPolicy(settings.memoryMaxMessages, settings.memoryMaxChars);
  }

  /**
   * The newest contiguous slice of history within both bounds, in chronological order. Stops at the
   * first message that does not fit (no gaps), and never starts with an assistant turn (some providers
   * reject a conversation that opens with the model speaking).
   */
  select(history: ChatMessage[]): ChatMessage[] {
    const picked: ChatMessage[] = [];
    let chars = 0;
    for (let i = history.length - 1; i >= 0; i--) {
      const message = history[i];
      if (picked.length >= this.maxMessages) break;
      if (chars + message.content.length > this.maxChars) break;
      picked.push(message);
      chars += message.content.length;
    }
    picked.reverse();
    while (picked.length > 0 && picked[0].role === "assistant") picked.shift();
    return picked;
  }
}
