import { ConversationMemoryPolicy } from "../../../src/core/chat/memory-policy";
import type { ChatMessage } from "../../../src/core/ports/chat-model";
import { DEFAULT_SETTINGS } from "../../../src/core/settings";

function turns(count: number, size = 10): ChatMessage[] {
  return Array.from({ length: count }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: `${i}`.padEnd(size, ".") }));
}

describe("ConversationMemoryPolicy", () => {
  it("uses the desktop and mobile bounds from settings", () => {
    const desktop = ConversationMemoryPolicy.fromSettings(DEFAULT_SETTINGS, false);
    const mobile = ConversationMemoryPolicy.fromSettings(DEFAULT_SETTINGS, true);
    expect([desktop.maxMessages, desktop.maxChars]).toEqual([50, 16_000]);
    expect([mobile.maxMessages, mobile.maxChars]).toEqual([15, 6_000]);
  });

  it("keeps the newest messages up to the message count, in chronological order", () => {
    const history = turns(120);
    const picked = ConversationMemoryPolicy.fromSettings(DEFAULT_SETTINGS, false).select(history);
    expect(picked).toHaveLength(50);
    expect(picked[picked.length - 1]).toBe(history[119]);
    expect(picked[0]).toBe(history[70]);
    // Mobile: 15 newest, minus a leading assistant turn so the slice opens with the user.
    const mobile = ConversationMemoryPolicy.fromSettings(DEFAULT_SETTINGS, true).select(history);
    expect(mobile).toHaveLength(14);
    expect(mobile[0]).toBe(history[106]);
    expect(mobile[0].role).toBe("user");
  });

  it("stops at the character budget without leaving gaps", () => {
    const history = turns(40, 1000);
    const picked = ConversationMemoryPolicy.fromSettings(DEFAULT_SETTINGS, true).select(history);
    const chars = picked.reduce((n, m) => n + m.content.length, 0);
    expect(chars).toBeLessThanOrEqual(6_000);
    expect(picked).toHaveLength(6);
    expect(picked.map((m) => history.indexOf(m))).toEqual([34, 35, 36, 37, 38, 39]);

    const huge: ChatMessage[] = [{ role: "user", content: "small" }, { role: "assistant", content: "x".repeat(20_000) }, { role: "user", content: "latest" }];
    expect(new ConversationMemoryPolicy(50, 16_000).select(huge)).toEqual([{ role: "user", content: "latest" }]);
  });

  it("handles empty history and zero bounds", () => {
    expect(new ConversationMemoryPolicy(50, 16_000).select([])).toEqual([]);
    expect(new ConversationMemoryPolicy(0, 16_000).select(turns(4))).toEqual([]);
  });
});
