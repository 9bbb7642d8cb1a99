import type { ChatMessage } from "../ports/chat-model";

/**
 * Every prompt the agents send, in one place so they are easy to tune. They are deliberately short,
 * direct and example-free: small local models (8B on Ollama) follow these more reliably than long
 * instructions, negative rules or few-shot examples.
 */

export function createNotePrompt(topic: string): ChatMessage[] {
  return [
    {
      role: "user",
      content:
        `Write a short markdown note about: ${topic}\n\n` +
        `Start with a "# " title line. Then write a few "## " sections with short paragraphs or bullet points.`,
    },
  ];
}

/** One note (or selection) that fits in a single request. */
export function summarizeNotePrompt(title: string, text: string): ChatMessage[] {
  return [{ role: "user", content: `Summarize the following note titled "${title}".\n\n${text}\n\nSummary:` }];
}

/** Map step for a long note: one part of it. */
export function summarizePartPrompt(title: string, part: string, index: number, count: number): ChatMessage[] {
  return [
    {
      role: "user",
      content: `Summarize the following part (${index} of ${count}) of the note titled "${title}".\n\n${part}\n\nSummary:`,
    },
  ];
}

/** Reduce step: partial summaries, in order, into one. */
export function combineSummariesPrompt(title: string, summaries: string[]): ChatMessage[] {
  const parts = summaries.map((s, i) => `Part ${i + 1}:\n${s}`).join("\n\n");
  return [
    {
      role: "user",
      content: `Combine these summaries of the parts of the note titled "${title}" into one summary.\n\n${parts}\n\nSummary:`,
    },
  ];
}

/** Topic mode: the chunks that mention the topic, each labelled with its note; shortened (the last first) when they do not fit the window. */
export function summarizeTopicPrompt(topic: string, excerpts: { title: string; path: string; text: string }[]): ChatMessage[] {
  const body = excerpts.map((e) => `Note: ${e.title} (${e.path})\n${e.text}`).join("\n\n");
  const lead = `Summarize the following notes about ${topic}.\n\n`;
  return [{ role: "user", content: `${lead}${body}\n\nSummary:`, quoted: { start: lead.length, end: lead.length + body.length, kind: "excerpts" } }];
}

/** The names the classifier may answer with (see intent-classifier.ts). */
export const CLASSIFIER_INTENTS = [
  "create_note",
  "search_notes",
  "summarize_current_note",
  "summarize_topic",
  "make_flashcards",
  "quiz",
  "set_study_goal",
  "log_study_time",
  "list_study_goals",
  "study_goal_progress",
  "plan_study_week",
  "chat",
] as const;

export function intentClassifierPrompt(message: string, recent: ChatMessage[]): ChatMessage[] {
  const conversation = recent.length
    ? recent.map((m) => `${m.role}: ${oneLine(m.content, 300)}`).join("\n")
    : "(none)";
  return [
    { role: "system", content: "You sort the messages of a note-taking assistant. You answer with JSON only." },
    {
      role: "user",
      content:
        `What does the user want in their last message? Messages can be in any language (Spanish, French, ` +
        `German, Japanese, …): judge what they mean, not whether they use these English words.\n\n` +
        `Intents:\n` +
        `- create_note: write a new note about a topic. argument: the topic.\n` +
        `- search_notes: find notes about something. argument: what to search for.\n` +
        `- summarize_current_note: summarize the note that is open now. argument: "".\n` +
        `- summarize_topic: summarize what the notes say about a topic. argument: the topic.\n` +
        `- make_flashcards: make flashcards (study cards). argument: the topic, or "" for the note that is open now. count: how many cards, only if the user says.\n` +
        `- quiz: quiz or test the user. argument: the deck or topic.\n` +
        `- set_study_goal: set a new study goal. argument: the goal. target_date: its date as the user wrote it, only if given.\n` +
        `- log_study_time: record time spent studying for a goal. argument: the goal. duration: as the user wrote it (a number and its unit).\n` +
        `- list_study_goals: show all study goals. argument: "".\n` +
        `- study_goal_progress: how a study goal is going. argument: the goal.\n` +
        `- plan_study_week: plan the week for a study goal. argument: the goal.\n` +
        `- chat: anything else, including questions about how to do something. argument: "".\n\n` +
        `Recent conversation:\n${conversation}\n\n` +
        `Last message: ${JSON.stringify(oneLine(message, 1000))}\n\n` +
        `The argument keeps the user's own words and language (for "crea una nota sobre las mareas": "las mareas"), ` +
        `as do target_date and duration.\n` +
        `Answer as JSON: {"intent": "...", "argument": "..."}, adding "count", "target_date" or "duration" only for the intents that name them.`,
    },
  ];
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
