import { cleanArgument, detectIntent, normalizeMessage } from "../../../src/core/agents/intent-patterns";

const intentOf = (message: string) => {
  const found = detectIntent(message);
  return found ? { intent: found.intent, argument: found.argument } : null;
};

describe("detectIntent: create note", () => {
  it.each([
    ["create a note on machine learning basics", "machine learning basics"],
    ["Create a short note on Machine Learning", "Machine Learning"],
    ["make a note about the French revolution", "the French revolution"],
    ["write a note on Kubernetes", "Kubernetes"],
    ["write a short note about photosynthesis.", "photosynthesis"],
    ["CREATE A NOTE ABOUT AWS LAMBDA", "AWS LAMBDA"],
    ["please create a new note about rust ownership", "rust ownership"],
    ["Can you write a note about sourdough bread?", "sourdough bread"],
    ["could you please make me a quick note on git rebase", "git rebase"],
    ["Hey Krypton, create a note on \"Zettelkasten\"", "Zettelkasten"],
    ["create a note on [[Stoicism]]", "Stoicism"],
    ["write a note about how to write notes", "how to write notes"],
    ["create a note on café culture, please", "café culture"],
    ["  create   a note\non  tides  ", "tides"],
  ])("%s → %s", (message, topic) => {
    expect(intentOf(message)).toEqual({ intent: "create-note", argument: topic });
  });
});

describe("detectIntent: search notes", () => {
  it.each([
    ["find notes about AWS", "AWS"],
    ["Find my notes on docker compose", "docker compose"],
    ["search my notes for kubernetes", "kubernetes"],
    ["Search notes for 'budget 2024'", "budget 2024"],
    ["show me notes on gardening", "gardening"],
    ["Show me my notes about tomatoes", "tomatoes"],
    ["which notes talk about TypeScript?", "TypeScript"],
    ["Which of my notes mention Alice", "Alice"],
    ["do I have any notes about taxes?", "taxes"],
    ["can you find notes about vector databases", "vector databases"],
  ])("%s → %s", (message, query) => {
    expect(intentOf(message)).toEqual({ intent: "search-notes", argument: query });
  });
});

describe("detectIntent: summarize the current note", () => {
  it.each([
    "summarize this note",
    "Summarise the current note",
    "summarize the current note please",
    "give me a summary of this note",
    "Give me a short summary of the current note.",
    "what is this note about?",
    "What's this note about",
    "What’s this note about?",
    "can you summarize this note for me?",
    "sum up this note",
  ])("%s", (message) => {
    expect(intentOf(message)).toEqual({ intent: "summarize-note", argument: "" });
  });
});

describe("detectIntent: summarize a topic", () => {
  it.each([
    ["summarize my notes on AWS", "AWS"],
    ["Summarize my notes about cloud computing", "cloud computing"],
    ["summarise all my notes about Rome", "Rome"],
    ["give me a summary of my notes on machine learning", "machine learning"],
    ["Give me a summary of my notes about the Roman empire?", "the Roman empire"],
    ["what do my notes say about Kafka?", "Kafka"],
    ["What do my notes say about \"quarterly planning\"", "quarterly planning"],
    ["summarize what my notes say about sleep", "sleep"],
  ])("%s → %s", (message, topic) => {
    expect(intentOf(message)).toEqual({ intent: "summarize-topic", argument: topic });
  });
});

describe("detectIntent: questions that merely mention notes stay normal chat", () => {
  it.each([
    "how do I create a note in Obsidian?",
    "How do I create a note on mobile?",
    "can you write a note template?",
    "write a note template for meetings",
    "what's the best way to write a note about a book?",
    "why did you create a note about cats?",
    "I created a note about AWS yesterday, what do you think of it?",
    "Should I make a note about this?",
    "where can I find notes about AWS in the vault?",
    "how do I search my notes for a tag?",
    "What is a note?",
    "what is this?",
    "summarize this note in French",
    "summarize this",
    "summarize the following text: lorem ipsum",
    "what do you know about AWS?",
    "tell me about machine learning",
    "create a note",
    "create a note on",
    "find notes about",
    "notes about AWS",
    "",
    "   ",
  ])("%p → null", (message) => {
    expect(detectIntent(message)).toBeNull();
  });

  it.each(["make a note about this", "create a note on our conversation", "write a note about what we discussed", "write a note about that"])(
    "leaves %p (a topic that only points at the conversation) to chat",
    (message) => {
      expect(detectIntent(message)).toBeNull();
    },
  );

  it("still takes topics that merely start with such a word", () => {
    expect(intentOf("write a note about this week's plan")).toEqual({ intent: "create-note", argument: "this week's plan" });
    expect(intentOf("find notes about it security")).toEqual({ intent: "search-notes", argument: "it security" });
  });

  it("treats a paragraph-long 'topic' as a chat message, not a note title", () => {
    expect(detectIntent(`create a note about ${"very ".repeat(60)}long things`)).toBeNull();
  });
});

describe("message and argument clean-up", () => {
  it("normalizes quotes, whitespace and trailing politeness", () => {
    expect(normalizeMessage("  What’s   this note about?? ")).toBe("What's this note about");
    expect(normalizeMessage("summarize this note for me, please!")).toBe("summarize this note");
  });

  it("unwraps quotes and wiki links around a topic", () => {
    expect(cleanArgument(' "AWS" ')).toBe("AWS");
    expect(cleanArgument("[[Daily notes]].")).toBe("Daily notes");
    expect(cleanArgument("`k8s`")).toBe("k8s");
  });

  it("reports that the patterns decided", () => {
    expect(detectIntent("find notes about AWS")?.source).toBe("patterns");
  });
});

describe("detectIntent in other languages", () => {
  const cases: Record<string, [string, string, string][]> = {
    Spanish: [
      ["crea una nota sobre las mareas", "create-note", "las mareas"],
      ["¿Puedes escribir una nota corta acerca de Docker?", "create-note", "Docker"],
      ["por favor, crea una nota sobre la fotosíntesis", "create-note", "la fotosíntesis"],
      ["busca notas sobre docker", "search-notes", "docker"],
      ["Búscame mis notas sobre kubernetes, por favor", "search-notes", "kubernetes"],
      ["¿qué notas hablan de impuestos?", "search-notes", "impuestos"],
      ["resume esta nota", "summarize-note", ""],
      ["resume mis notas sobre AWS", "summarize-topic", "AWS"],
      ["¿Qué dicen mis notas sobre el sueño?", "summarize-topic", "el sueño"],
    ],
    French: [
      ["crée une note sur les marées", "create-note", "les marées"],
      ["écris-moi une courte note à propos de Docker", "create-note", "Docker"],
      ["cherche mes notes sur docker", "search-notes", "docker"],
      ["quelles notes parlent de Kafka ?", "search-notes", "Kafka"],
      ["résume cette note", "summarize-note", ""],
      ["Résume cette note, s'il te plaît", "summarize-note", ""],
      ["résume mes notes sur le sommeil", "summarize-topic", "le sommeil"],
      ["que disent mes notes sur Rome ?", "summarize-topic", "Rome"],
      ["cherche des notes sur docker", "search-notes", "docker"],
      ["montre-moi des notes sur Kafka", "search-notes", "Kafka"],
    ],
    German: [
      ["erstelle eine Notiz über Gezeiten", "create-note", "Gezeiten"],
      ["Bitte schreib mir eine kurze Notiz zu Docker", "create-note", "Docker"],
      ["finde Notizen über Kubernetes", "search-notes", "Kubernetes"],
      ["Durchsuche meine Notizen nach Steuern", "search-notes", "Steuern"],
      ["fasse diese Notiz zusammen", "summarize-note", ""],
      ["fasse meine Notizen über AWS zusammen", "summarize-topic", "AWS"],
      ["Was sagen meine Notizen über Schlaf?", "summarize-topic", "Schlaf"],
      // "bitte" after the verb, and a modal question with the verb at the end, as German puts them.
      ["Erstelle bitte eine Notiz über Gezeiten", "create-note", "Gezeiten"],
      ["Schreib mir bitte eine Notiz zum Thema Gezeiten", "create-note", "Gezeiten"],
      ["Kannst du eine Notiz über Gezeiten erstellen?", "create-note", "Gezeiten"],
      ["Finde bitte Notizen über Docker", "search-notes", "Docker"],
      ["Kannst du mir Notizen über Docker suchen?", "search-notes", "Docker"],
      ["Fasse bitte diese Notiz zusammen", "summarize-note", ""],
      ["Kannst du diese Notiz zusammenfassen?", "summarize-note", ""],
    ],
    Portuguese: [
      ["crie uma nota sobre as marés", "create-note", "as marés"],
      ["procure minhas notas sobre docker", "search-notes", "docker"],
      ["resuma esta nota", "summarize-note", ""],
      ["o que dizem minhas notas sobre investimentos?", "summarize-topic", "investimentos"],
      ["resuma essa nota", "summarize-note", ""],
    ],
    Italian: [
      ["crea una nota sulle maree", "create-note", "maree"],
      ["scrivi una breve nota su Docker", "create-note", "Docker"],
      ["cerca le mie note su kubernetes", "search-notes", "kubernetes"],
      ["riassumi questa nota", "summarize-note", ""],
      ["cosa dicono le mie note sul sonno?", "summarize-topic", "sonno"],
      ["puoi creare una nota sulle maree?", "create-note", "maree"],
      ["potresti scrivere una nota su Docker", "create-note", "Docker"],
      ["puoi cercare le note su kubernetes?", "search-notes", "kubernetes"],
    ],
    Russian: [
      ["создай заметку о приливах", "create-note", "приливах"],
      ["Пожалуйста, напиши короткую заметку про Docker", "create-note", "Docker"],
      ["найди заметки о кубернетес", "search-notes", "кубернетес"],
      ["перескажи эту заметку", "summarize-note", ""],
      ["что говорят мои заметки о сне?", "summarize-topic", "сне"],
      ["можешь создать заметку о приливах?", "create-note", "приливах"],
      ["можешь написать заметку про Docker", "create-note", "Docker"],
      ["кратко перескажи эту заметку", "summarize-note", ""],
    ],
  };
  for (const [language, list] of Object.entries(cases)) {
    it.each(list)(`${language}: %s → %s %s`, (message, intent, argument) => {
      expect(intentOf(message)).toEqual({ intent, argument });
    });
  }

  it.each([
    "¿cómo creo una nota en Obsidian?",
    "comment créer une note dans Obsidian ?",
    "wie erstelle ich eine Notiz in Obsidian?",
    "como faço para criar uma nota?",
    "come si crea una nota su Obsidian?",
    "как создать заметку в Obsidian?",
    "wie kann ich eine Notiz über Gezeiten erstellen?",
    "kann man eine Notiz über Gezeiten erstellen?",
    "come posso creare una nota su Obsidian?",
    "creare una nota sulle maree è utile?",
    "создать заметку о приливах — хорошая идея?",
    "resume esta nota en inglés",
    "crea una nota sobre esto",
    "busca notas sobre",
  ])("leaves the question %p to chat", (message) => {
    expect(detectIntent(message)).toBeNull();
  });
});
