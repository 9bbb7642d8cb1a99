import { SECTION_NOTES, SECTION_WEB, buildPrompt, citedNumbers } from "../../../src/core/chat/prompt-builder";
import { languageInstruction } from "../../../src/core/model/answer-language";
import { hit } from "./chat-fixtures";

describe("buildPrompt", () => {
  const notes = [
    hit("Setup/Ollama.md", "Install Ollama, then run ollama serve.", { headings: ["Install", "Linux"], startLine: 12, endLine: 20 }),
    hit("Ideas.md", "Krypton answers with citations.", { startLine: 4, endLine: 4 }),
  ];
  const web = [{ title: "Ollama docs", url: "https://ollama.com/docs", content: "Ollama runs models locally." }];

  it("numbers blocks across labelled sections and maps each number to its source", () => {
    const { messages, sources } = buildPrompt({ question: "How do I install Ollama?", history: [], mode: "hybrid", notes, web });
    const user = messages[messages.length - 2];
    expect(user.role).toBe("user");
    expect(user.content).toContain(`## ${SECTION_NOTES}\n[1] Setup/Ollama.md › Install › Linux (lines 12-20)\nInstall Ollama, then run ollama serve.`);
    expect(user.content).toContain("[2] Ideas.md (line 4)\nKrypton answers with citations.");
    expect(user.content).toContain(`## ${SECTION_WEB}\n[3] Ollama docs — https://ollama.com/docs\nOllama runs models locally.`);
    expect(user.content.indexOf(SECTION_NOTES)).toBeLessThan(user.content.indexOf(SECTION_WEB));
    expect(user.content.trim().endsWith("Question: How do I install Ollama?")).toBe(true);
    expect(sources).toEqual([
      { n: 1, kind: "note", path: "Setup/Ollama.md", title: "Ollama", headings: ["Install", "Linux"], startLine: 12, endLine: 20, snippet: "Install Ollama, then run ollama serve." },
      { n: 2, kind: "note", path: "Ideas.md", title: "Ideas", headings: [], startLine: 4, endLine: 4, snippet: "Krypton answers with citations." },
      { n: 3, kind: "web", title: "Ollama docs", url: "https://ollama.com/docs", snippet: "Ollama runs models locally." },
    ]);
  });

  it("tells the model to cite blocks as [n] and not to invent sources", () => {
    const { messages } = buildPrompt({ question: "q", history: [], mode: "rag", notes, web: [] });
    expect(messages[0].role).toBe("system");
    expect(messages[0].content).toContain("like [1] or [2][3]");
    expect(messages[0].content).toContain("Never invent note names");
    expect(messages[messages.length - 2].content).not.toContain(SECTION_WEB);
  });

  it("puts the bounded history between the instructions and the question", () => {
    const history = [
      { role: "user" as const, content: "Earlier question" },
      { role: "assistant" as const, content: "Earlier answer" },
    ];
    const { messages, sources } = buildPrompt({ question: "Follow-up?", history, mode: "none", notes: [], web: [] });
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "system"]);
    expect(messages[3].content).toBe("Follow-up?");
    expect(sources).toEqual([]);
    expect(messages[0].content).not.toContain("[1]");
  });

  // Small models follow the answer language when it is the last thing they read, not at the top of a long
  // prompt of notes in another language: the same instruction, in the same place, as agent mode's.
  it.each([
    ["Was steht in meinen Notizen über den Plan?", "German"],
    ["¿Qué dicen mis notas sobre el plan?", "Spanish"],
    ["What do my notes say about the plan?", "English"],
  ])("ends with the answer-language instruction for %j (%s), after the context and the question", (question, language) => {
    const { messages } = buildPrompt({ question, history: [], mode: "rag", notes, web: [] });
    expect(messages.at(-1)).toEqual({ role: "system", content: languageInstruction(question) });
    expect(messages.at(-1)!.content).toContain(`Write your answer in ${language}, the language of the user's message ("${question}")`);
    expect(messages.at(-2)!.content.endsWith(`Question: ${question}`)).toBe(true);
  });

  it("says plainly when retrieval found nothing", () => {
    const { messages } = buildPrompt({ question: "q", history: [], mode: "rag", notes: [], web: [] });
    expect(messages[0].content).toContain("No relevant context was found");
  });

  it("adds the current note as its own numbered section", () => {
    const { messages, sources } = buildPrompt({
      question: "Summarize this",
      history: [],
      mode: "rag",
      notes: [notes[1]],
      web: [],
      activeNote: { path: "Daily/2025-01-01.md", title: "2025-01-01", text: "Line one\nLine two", endLine: 2, truncated: true },
    });
    expect(messages[1].content).toContain("## Current note\n[1] Daily/2025-01-01.md (beginning only)\nLine one\nLine two");
    expect(sources[0]).toMatchObject({ n: 1, kind: "note", path: "Daily/2025-01-01.md", startLine: 1, endLine: 2 });
    expect(sources[1]).toMatchObject({ n: 2, path: "Ideas.md" });
  });

  it("finds the citations an answer uses", () => {
    const { sources } = buildPrompt({ question: "q", history: [], mode: "hybrid", notes, web });
    expect(citedNumbers("Install it [1]. See also [3][1] and [9].", sources)).toEqual([1, 3]);
  });
});
