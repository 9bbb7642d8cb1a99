import { detectFlashcardIntent, detectIntent, detectQuizIntent } from "../../../src/core/agents/intent-patterns";
import { detectGoalIntent } from "../../../src/core/goals/goal-agent";
import { parseMinutes } from "../../../src/core/goals/goal-parse";

/** Flashcard, quiz and study-goal requests in the nine languages besides English, and questions that stay chat. */
const languages: Record<string, { flashcards: [string, { topic: string | null; max?: number }][]; quiz: [string, string][]; goals: [string, unknown][]; questions: string[] }> = {
  es: {
    flashcards: [
      ["haz tarjetas sobre las mareas", { topic: "mareas" }],
      ["haz tarjetas", { topic: null }],
      ["hazme unas tarjetas de estudio", { topic: null }],
      ["crea 5 flashcards de esta nota", { topic: null, max: 5 }],
      ["¿Puedes hacer unas tarjetas de estudio acerca de la fotosíntesis?", { topic: "fotosíntesis" }],
    ],
    quiz: [["pregúntame sobre las mareas", "mareas"], ["hazme un quiz de AWS", "AWS"]],
    goals: [
      ["fija un objetivo de estudio: aprobar AWS para el 2027-01-15", { type: "create", goal: "aprobar AWS", target: "2027-01-15" }],
      ["registra 30 minutos en AWS", { type: "log", minutes: 30, goal: "AWS" }],
      ["¿cuáles son mis objetivos de estudio?", { type: "list" }],
      ["¿cómo voy con AWS?", { type: "progress", goal: "AWS" }],
      ["planifica mi semana para AWS", { type: "plan", goal: "AWS" }],
    ],
    questions: ["¿cómo hago tarjetas?", "¿qué es un objetivo de estudio?", "registra mis ideas en AWS"],
  },
  fr: {
    flashcards: [
      ["crée des flashcards sur les marées", { topic: "marées" }],
      ["crée des flashcards", { topic: null }],
      ["fais-moi 5 fiches de révision", { topic: null, max: 5 }],
      ["fais-moi 5 fiches de révision sur l'océan", { topic: "océan", max: 5 }],
      ["génère des flashcards de cette note", { topic: null }],
    ],
    quiz: [["interroge-moi sur les marées", "marées"], ["fais-moi un quiz sur AWS", "AWS"]],
    goals: [
      ["fixe un objectif d'étude : réussir AWS d'ici le 2027-01-15", { type: "create", goal: "réussir AWS", target: "2027-01-15" }],
      ["note 1 heure 15 minutes sur AWS", { type: "log", minutes: 75, goal: "AWS" }],
      ["quels sont mes objectifs d'étude ?", { type: "list" }],
      ["où en suis-je avec AWS ?", { type: "progress", goal: "AWS" }],
      ["planifie ma semaine pour AWS", { type: "plan", goal: "AWS" }],
    ],
    questions: ["comment créer des flashcards ?", "c'est quoi un objectif d'étude ?", "qu'est-ce qu'un quiz ?"],
  },
  de: {
    flashcards: [
      ["erstelle Karteikarten über Gezeiten", { topic: "Gezeiten" }],
      ["erstelle Karteikarten", { topic: null }],
      ["Kannst du bitte Lernkarten erstellen?", { topic: null }],
      ["Kannst du bitte 5 Karteikarten über die Gezeiten erstellen?", { topic: "Gezeiten", max: 5 }],
      ["mach mir Lernkarten aus dieser Notiz", { topic: null }],
    ],
    quiz: [["frag mich zu Gezeiten", "Gezeiten"], ["Kannst du mich zu Gezeiten abfragen?", "Gezeiten"], ["starte ein Quiz über AWS", "AWS"]],
    goals: [
      ["setze ein Lernziel: AWS bestehen bis 2027-01-15", { type: "create", goal: "AWS bestehen", target: "2027-01-15" }],
      ["trage 30 Minuten für AWS ein", { type: "log", minutes: 30, goal: "AWS" }],
      ["zeig mir meine Lernziele", { type: "list" }],
      ["wie komme ich voran mit AWS?", { type: "progress", goal: "AWS" }],
      ["plane meine Woche für AWS", { type: "plan", goal: "AWS" }],
    ],
    questions: ["wie funktionieren Karteikarten?", "was ist ein Lernziel?", "Wie erstelle ich Karteikarten über Gezeiten?"],
  },
  pt: {
    flashcards: [
      ["faça flashcards sobre marés", { topic: "marés" }],
      ["faça flashcards", { topic: null }],
      ["crie alguns cartões de estudo", { topic: null }],
      ["crie 5 cartões sobre a fotossíntese", { topic: "fotossíntese", max: 5 }],
    ],
    quiz: [["me pergunte sobre as marés", "marés"], ["faça um quiz sobre AWS", "AWS"]],
    goals: [
      ["defina uma meta de estudo: passar no AWS até 2027-01-15", { type: "create", goal: "passar no AWS", target: "2027-01-15" }],
      ["registre 30 minutos em AWS", { type: "log", minutes: 30, goal: "AWS" }],
      ["quais são minhas metas de estudo?", { type: "list" }],
      ["como estou indo em AWS?", { type: "progress", goal: "AWS" }],
      ["planeje minha semana para AWS", { type: "plan", goal: "AWS" }],
    ],
    questions: ["como faço flashcards?", "o que é uma meta de estudo?"],
  },
  it: {
    flashcards: [
      ["crea flashcard sulle maree", { topic: "maree" }],
      ["crea delle flashcard", { topic: null }],
      ["fammi 5 schede", { topic: null, max: 5 }],
      ["fammi 5 schede sull'energia", { topic: "energia", max: 5 }],
      ["puoi creare delle flashcard su questa nota?", { topic: null }],
    ],
    quiz: [["interrogami sulle maree", "maree"], ["fammi un quiz su AWS", "AWS"]],
    goals: [
      ["imposta un obiettivo di studio: superare AWS entro il 2027-01-15", { type: "create", goal: "superare AWS", target: "2027-01-15" }],
      ["segna 30 minuti su AWS", { type: "log", minutes: 30, goal: "AWS" }],
      ["quali sono i miei obiettivi di studio?", { type: "list" }],
      ["come sto andando con AWS?", { type: "progress", goal: "AWS" }],
      ["pianifica la mia settimana per AWS", { type: "plan", goal: "AWS" }],
    ],
    questions: ["come si creano le flashcard?", "cos'è un obiettivo di studio?"],
  },
  ru: {
    flashcards: [
      ["сделай карточки про приливы", { topic: "приливы" }],
      ["сделай карточки", { topic: null }],
      ["создай 5 карточек", { topic: null, max: 5 }],
      ["создай 5 карточек по этой заметке", { topic: null, max: 5 }],
    ],
    quiz: [["проверь меня про приливы", "приливы"], ["устрой мне тест по AWS", "AWS"]],
    goals: [
      ["поставь учебную цель: сдать AWS до 2027-01-15", { type: "create", goal: "сдать AWS", target: "2027-01-15" }],
      ["запиши 30 минут на AWS", { type: "log", minutes: 30, goal: "AWS" }],
      ["покажи мои учебные цели", { type: "list" }],
      ["как мои успехи по AWS?", { type: "progress", goal: "AWS" }],
      ["спланируй неделю для AWS", { type: "plan", goal: "AWS" }],
    ],
    questions: ["как сделать карточки?", "что такое учебная цель?"],
  },
  ja: {
    flashcards: [
      ["潮汐についてのフラッシュカードを作って", { topic: "潮汐" }],
      ["フラッシュカードを作って", { topic: null }],
      ["カードを5枚作成してください", { topic: null, max: 5 }],
      ["このノートからフラッシュカードを5枚作成してください", { topic: null, max: 5 }],
    ],
    quiz: [["潮汐についてクイズを出して", "潮汐"]],
    goals: [
      ["学習目標を設定して：AWSに合格", { type: "create", goal: "AWSに合格" }],
      ["AWSに30分を記録して", { type: "log", minutes: 30, goal: "AWS" }],
      ["学習目標を見せて", { type: "list" }],
      ["AWSの進捗はどう？", { type: "progress", goal: "AWS" }],
      ["AWSのための今週の計画を立てて", { type: "plan", goal: "AWS" }],
    ],
    questions: ["フラッシュカードの作り方は？", "クイズとは何ですか？", "学習目標とは？"],
  },
  zh: {
    flashcards: [
      ["制作关于潮汐的抽认卡", { topic: "潮汐" }],
      ["制作抽认卡", { topic: null }],
      ["帮我做5张闪卡", { topic: null, max: 5 }],
      ["帮我做5张关于潮汐的闪卡", { topic: "潮汐", max: 5 }],
    ],
    quiz: [["考考我关于潮汐的知识", "潮汐"], ["就潮汐测验我一下", "潮汐"]],
    goals: [
      ["设定学习目标：通过AWS", { type: "create", goal: "通过AWS" }],
      ["给AWS记录30分钟", { type: "log", minutes: 30, goal: "AWS" }],
      ["显示我的学习目标", { type: "list" }],
      ["AWS进度怎么样？", { type: "progress", goal: "AWS" }],
      ["为AWS制定这周的计划", { type: "plan", goal: "AWS" }],
    ],
    questions: ["如何制作抽认卡？", "什么是学习目标？"],
  },
  ko: {
    flashcards: [
      ["조수에 대한 플래시카드 만들어 줘", { topic: "조수" }],
      ["플래시카드 만들어 줘", { topic: null }],
      ["카드 5개 만들어 주세요", { topic: null, max: 5 }],
      ["이 노트로 카드 5개 만들어 주세요", { topic: null, max: 5 }],
    ],
    quiz: [["조수에 대한 퀴즈 내 줘", "조수"]],
    goals: [
      ["학습 목표 설정해 줘: AWS 합격", { type: "create", goal: "AWS 합격" }],
      ["AWS에 30분 기록해 줘", { type: "log", minutes: 30, goal: "AWS" }],
      ["내 학습 목표 보여 줘", { type: "list" }],
      ["AWS 진행 상황 어때?", { type: "progress", goal: "AWS" }],
      ["AWS를 위한 이번 주 계획 세워 줘", { type: "plan", goal: "AWS" }],
    ],
    questions: ["플래시카드는 어떻게 만들어요?", "학습 목표가 뭐예요?"],
  },
};

describe.each(Object.entries(languages))("study requests in %s", (_lang, table) => {
  it.each(table.flashcards)("flashcards: %s", (message, expected) => {
    expect(detectFlashcardIntent(message)).toEqual(expected);
    expect(detectIntent(message)).toBeNull();
  });
  it.each(table.quiz)("quiz: %s", (message, topic) => {
    expect(detectQuizIntent(message)).toBe(topic);
  });
  it.each(table.goals)("study goal: %s", (message, expected) => {
    expect(detectGoalIntent(message)).toEqual(expected);
  });
  it.each(table.questions.map((q) => [q]))("stays chat: %s", (message) => {
    expect(detectFlashcardIntent(message)).toBeNull();
    expect(detectQuizIntent(message)).toBeNull();
    expect(detectGoalIntent(message)).toBeNull();
    expect(detectIntent(message)).toBeNull();
  });
});

describe("durations in the other languages", () => {
  it.each([
    ["30 minutos", 30],
    ["1 Stunde 15 Minuten", 75],
    ["1 час 30 минут", 90],
    ["1時間30分", 90],
    ["30分钟", 30],
    ["1시간 30분", 90],
    ["45 minutes", 45],
  ])("%s", (text, minutes) => {
    expect(parseMinutes(text)).toBe(minutes);
  });
});
