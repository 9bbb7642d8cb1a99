/** Flashcard requests are recognised with the other intents, in one place: src/core/agents/intent-patterns.ts. */
export { detectFlashcardIntent, type FlashcardIntent } from "../agents/intent-patterns";
