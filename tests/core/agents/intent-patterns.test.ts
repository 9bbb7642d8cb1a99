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

describe("detectIntent in Japanese, Chinese and Korean (no spaces between words, particles left out of the topic)", () => {
  const cases: Record<string, [string, string, string][]> = {
    Japanese: [
      ["潮汐についてのノートを作成して", "create-note", "潮汐"],
      ["潮汐に関するメモを書いてください。", "create-note", "潮汐"],
      ["機械学習について短いノートを作ってくれますか？", "create-note", "機械学習"],
      ["「光合成」についてのノートを作成してください", "create-note", "光合成"],
      ["ドッカーに関するノートを検索して", "search-notes", "ドッカー"],
      ["Docker に関するノートを探してください", "search-notes", "Docker"],
      ["税金についてのメモを見つけて", "search-notes", "税金"],
      ["このノートを要約して", "summarize-note", ""],
      ["現在のノートをまとめてください！", "summarize-note", ""],
      ["睡眠についての私のノートを要約して", "summarize-topic", "睡眠"],
      ["AWSに関するノートをまとめて", "summarize-topic", "AWS"],
    ],
    "Chinese (simplified)": [
      ["创建一个关于潮汐的笔记", "create-note", "潮汐"],
      ["请写一篇关于机器学习的笔记。", "create-note", "机器学习"],
      ["帮我新建一个关于光合作用的简短笔记吧", "create-note", "光合作用"],
      ["你能创建一个关于潮汐的笔记吗？", "create-note", "潮汐"],
      ["搜索关于docker的笔记", "search-notes", "docker"],
      ["帮我找一下关于 Kubernetes 的笔记", "search-notes", "Kubernetes"],
      ["在我的笔记中搜索税务", "search-notes", "税务"],
      ["哪些笔记提到了Kafka？", "search-notes", "Kafka"],
      ["总结这篇笔记", "summarize-note", ""],
      ["请总结一下当前笔记", "summarize-note", ""],
      ["把这篇笔记总结一下", "summarize-note", ""],
      ["总结我关于睡眠的笔记", "summarize-topic", "睡眠"],
    ],
    "Chinese (traditional)": [
      ["創建一個關於潮汐的筆記", "create-note", "潮汐"],
      ["請寫一篇關於機器學習的筆記", "create-note", "機器學習"],
      ["搜尋關於docker的筆記", "search-notes", "docker"],
      ["幫我找關於稅務的筆記", "search-notes", "稅務"],
      ["總結這篇筆記", "summarize-note", ""],
      ["總結我關於睡眠的筆記", "summarize-topic", "睡眠"],
    ],
    Korean: [
      ["조수에 대한 노트를 만들어 줘", "create-note", "조수"],
      ["머신러닝에 관한 메모를 작성해 주세요.", "create-note", "머신러닝"],
      ["광합성에 대해 노트를 써줘", "create-note", "광합성"],
      ["도커에 관한 노트를 검색해 줘", "search-notes", "도커"],
      ["Kubernetes 관련 노트를 찾아 줄래?", "search-notes", "Kubernetes"],
      ["세금에 대한 내 노트를 보여 주세요", "search-notes", "세금"],
      ["이 노트를 요약해 줘", "summarize-note", ""],
      ["현재 노트를 정리해 주세요!", "summarize-note", ""],
      ["수면에 대한 노트를 요약해 줘", "summarize-topic", "수면"],
    ],
  };
  for (const [language, list] of Object.entries(cases)) {
    it.each(list)(`${language}: %s → %s %s`, (message, intent, argument) => {
      expect(intentOf(message)).toEqual({ intent, argument });
    });
  }

  it.each([
    // Japanese
    "ノートを作成するにはどうすればいいですか？",
    "潮汐についてのノートを作成するにはどうすればいいですか？",
    "ノートを作成して",
    "なぜ潮汐についてのノートを作成したの？",
    "このノートを英語で要約して",
    "これについてのノートを作成して",
    "ドッカーに関するノートはどこにありますか？",
    // Chinese
    "如何创建笔记？",
    "怎么创建关于潮汐的笔记？",
    "如何搜索笔记？",
    "创建一个新的笔记",
    "创建一个关于这个的笔记",
    "用英文总结这篇笔记",
    "什么是笔记？",
    // Korean
    "노트를 어떻게 만들어요?",
    "조수에 대한 노트를 어떻게 만들어요?",
    "노트를 만들어 줘",
    "이 노트를 영어로 요약해 줘",
    "그것에 대한 노트를 만들어 줘",
    "도커에 관한 노트는 어디에 있어요?",
  ])("leaves the question %p to chat", (message) => {
    expect(detectIntent(message)).toBeNull();
  });
});
