/**
 * How long each kind of answer may be, in tokens (ChatRequest.maxTokens: Ollama `num_predict`, Gemini
 * `maxOutputTokens`), chosen by what the caller asked for. The cap ends a small model stuck in a loop
 * (the same line again and again, a JSON object never closed) after a few seconds instead of at the
 * server's own limit, and the same number is the room the context window keeps for the answer
 * (num_ctx = prompt + budget). Each is about twice what a good answer of its kind needs. A model that
 * reasons first gets room for that (providers/answer-room.ts). A cut answer is never used.
 *
 * Streamed chat answers and agent-mode turns get no cap: the user watches them and can press Stop, agent
 * mode has its time limit, and cutting a real long answer would be worse than letting a loop run.
 */
export const ANSWER_BUDGET = {
  /** One label or line: the intent of a message, a rewritten search query. */
  label: 256,
  /** A short list or a grade: query variants, rerank scores, a quiz grade with its sentence of feedback. */
  list: 512,
  /** A verdict with feedback: a workflow verify step. */
  verdict: 1024,
  /** A summary of a note, a part of one, or a topic. */
  summary: 1536,
  /** A whole new note. */
  note: 3072,
  /** Content-rich structured output or free text for a workflow: flashcards, a workflow step's answer. */
  long: 4096,
} as const;
