import { z } from "zod";
import { ignoredFolderText, parseCards, srCards, srSkip, type SrSkip } from "../flashcards/card-parser";
import { vaultNow, type FlashcardService, type VaultNow } from "../flashcards/flashcard-service";
import { loadSrFormat, srDefaultsRemark, type SrFormat } from "../flashcards/sr-format";
import { askJson } from "../model/ask-json";
import { ANSWER_BUDGET } from "../model/answer-budget";
import { AgentError } from "../notes/agent-error";
import { sameWordsByStem } from "../indexing/text-analyzer";
import { baseNameOf, isInFolder, nameKey } from "../notes/note-paths";
import type { ChatModel } from "../ports/chat-model";
import type { Host } from "../ports/host";
import type { KryptonSettings } from "../settings";
import { errorMessage } from "../util/errors";
import {
  apartFromSiblings,
  currentCard,
  gradeLocally,
  hintFor,
  missedNewCards,
  questionText,
  quizCardsFromDeck,
  quizCardsFromNew,
  questionsUpToCap,
  readCommand,
  record,
  startQuiz,
  stop,
  summaryText,
  type Grade,
  type QuizCard,
  type QuizState,
} from "./quiz-state";
import { countOf } from "../util/text";

const gradeSchema = z.object({
  verdict: z.enum(["correct", "partial", "wrong"]),
  score: z.number().min(0).max(1),
  feedback: z.string(),
});

/** Until the chat gives the new conversation its id, a quiz started there waits under this key. */
const PENDING = "_pending";

/**
 * "Quiz me on <deck>": one card at a time, graded locally when the answer is exact or a cloze, by the model
 * otherwise (askJson `{verdict, score, feedback}`). State lives in .krypton/quiz/<conversation>.json.
 */
export class QuizService {
  constructor(
    private readonly deps: {
      host: Host;
      settings: () => KryptonSettings;
      chatModel: () => ChatModel | null;
      /** When set, a topic without a deck is quizzed from the vault's notes (cards made in memory). */
      flashcards?: FlashcardService;
    },
  ) {}

  /**
   * Starts a quiz on a deck (a note with Spaced Repetition cards, by name) and returns the first question.
   * No deck by that name: cards about the topic are made from the vault's notes, in memory (no deck written).
   */
  async start(conversationId: string | undefined, name: string, signal?: AbortSignal): Promise<string> {
    // One listing and one flashcards folder for the deck and, when there is none, the cards drafted from the notes.
    const now = await vaultNow(this.deps.host.vault, this.deps.settings());
    const deck = await this.findDeck(name, now);
    if (!deck) return this.startFromNotes(conversationId, name, now, signal);
    const { path, text } = deck;
    const format = await loadSrFormat(this.deps.host.vault);
    const parsed = parseCards(text, format);
    const cards = quizCardsFromDeck(srCards(parsed, path, format), path);
    // Read in SR's defaults, the deck's cards in the user's own separators are not found: say why with the outcome.
    const defaults = format.problem ? `\n\n${srDefaultsRemark(format.problem, "read")}` : "";
    if (!cards.length) {
      // Cards SR does not review: say why, as the note is plainly the deck meant.
      const skip = parsed.cards.length ? srSkip(parsed, path, format) : null;
      // A note named like the topic but with no cards (not a deck): quiz from the notes on the topic instead.
      if (!skip && this.deps.flashcards && !isInFolder(path, now.deckFolder)) return this.startFromNotes(conversationId, name, now, signal);
      throw new AgentError(`${path} has no flashcards to quiz you on${skip ? `: ${skipReason(skip, path, format)}` : ""}.${defaults}`, "not-found");
    }
    const state = startQuiz(baseNameOf(path), this.order(cards));
    await this.save(conversationId ?? PENDING, state);
    return `Quiz on **${state.title}**: ${countOf(state.cards.length, "card")}.${defaults}\n\n${questionText(state)}`;
  }

  /** `now`: the vault's notes and flashcards folder, as start() read them. */
  private async startFromNotes(conversationId: string | undefined, topic: string, now: VaultNow, signal?: AbortSignal): Promise<string> {
    if (!this.deps.flashcards) throw new AgentError(`No deck named "${topic}". Make one first: "make flashcards about ${topic}".`, "not-found");
    const draft = await this.deps.flashcards.draftFromTopic(topic, QUIZ_FROM_NOTES_CARDS, signal, now);
    const cards = quizCardsFromNew(draft.cards, draft.format);
    if (!cards.length) throw new AgentError(`No deck named "${topic}", and no cards could be made from your notes about it.`, "not-found", { keywordOnly: draft.keywordOnly });
    const state: QuizState = {
      ...startQuiz(draft.title, this.order(cards)),
      fromNotes: { topic: draft.title, cards: draft.cards, offer: "none" },
    };
    await this.save(conversationId ?? PENDING, state);
    const from = draft.sources.map((p) => `[[${p.replace(/\.md$/i, "")}]]`).join(", ");
    const keywordOnly = draft.keywordOnly ? `\n\n_${draft.keywordOnly}_` : "";
    const n = state.cards.length;
    return `No deck named "${topic}": quiz from your notes (${from}), ${countOf(n, "card")}, not saved to a deck.${keywordOnly}\n\n${questionText(state)}`;
  }

  /** A finished quiz from notes whose "add the missed cards?" offer is still open in this conversation. */
  async openOffer(conversationId: string | undefined): Promise<QuizState | null> {
    const state = await this.load(conversationId ?? PENDING);
    return state?.status === "finished" && state.fromNotes?.offer === "open" ? state : null;
  }

  /** The user's answer to the offer: yes writes the missed cards to the topic's deck (append-only, de-duplicated). */
  async answerOffer(conversationId: string | undefined, state: QuizState, accept: boolean): Promise<string | null> {
    const key = conversationId ?? PENDING;
    await this.save(key, { ...state, fromNotes: { ...state.fromNotes!, offer: "done" } });
    if (!accept || !this.deps.flashcards) return null;
    const run = await this.deps.flashcards.addCards(state.fromNotes!.topic, missedNewCards(state));
    return run.text;
  }

  /** The running quiz of this conversation, if any (adopting one started before the conversation had an id). */
  async active(conversationId: string | undefined): Promise<QuizState | null> {
    const key = conversationId ?? PENDING;
    let state = await this.load(key);
    if (!state && conversationId) {
      state = await this.load(PENDING);
      if (state) {
        await this.save(conversationId, state);
        await this.deps.host.data.remove(fileOf(PENDING));
      }
    }
    return state && state.status === "active" ? state : null;
  }

  /** Handles one message of a running quiz: an answer, "hint", "skip" or "stop". */
  async reply(conversationId: string | undefined, state: QuizState, message: string, signal?: AbortSignal): Promise<string> {
    const key = conversationId ?? PENDING;
    const card = currentCard(state);
    if (!card) return summaryText(state);
    const command = readCommand(message);
    if (command.type === "hint") {
      const next = { ...state, hints: state.hints + 1 };
      await this.save(key, next);
      return `Hint: ${hintFor(card, state.hints)}`;
    }
    if (command.type === "stop") {
      const done = withOffer(stop(state));
      await this.save(key, done);
      return summaryText(done);
    }
    let grade: Grade;
    let answer = "";
    if (command.type === "skip") grade = { verdict: "skipped", score: 0, feedback: `The answer was: ${card.answer}`, by: "local" };
    else {
      answer = command.text;
      grade = gradeLocally(card, answer) ?? (await this.gradeWithModel(card.prompt, card.answer, answer, signal));
    }
    // A hint costs half a point.
    if (grade.verdict === "correct" && state.hints > 0) grade = { ...grade, score: Math.min(grade.score, 0.5) };
    const next = withOffer(record(state, answer, grade));
    await this.save(key, next);
    const feedback = grade.verdict === "skipped" ? `Skipped. ${grade.feedback}` : `${label(grade)} ${grade.feedback}`.trim();
    return next.status === "finished" ? `${feedback}\n\n${summaryText(next)}` : `${feedback}\n\n${questionText(next)}`;
  }

  private async gradeWithModel(question: string, expected: string, given: string, signal?: AbortSignal): Promise<Grade> {
    const model = this.deps.chatModel();
    if (!model) throw new AgentError("No chat model is configured to grade free-text answers. Choose one in Krypton's settings.", "no-model");
    const out = await askJson(
      model,
      [
        {
          role: "system",
          content:
            "You grade a student's answer to a flashcard against the expected answer. Judge meaning, not wording. " +
            'verdict: "correct", "partial" or "wrong"; score: 0 to 1; feedback: one short sentence. Reply with JSON only.',
        },
        { role: "user", content: `Question: ${question}\nExpected answer: ${expected}\nStudent's answer: ${given}` },
      ],
      gradeSchema,
      { what: "grade the answer", maxTokens: ANSWER_BUDGET.list, signal },
    );
    return { verdict: out.verdict, score: out.verdict === "correct" ? Math.max(out.score, 0.5) : out.verdict === "wrong" ? 0 : out.score, feedback: out.feedback, by: "model" };
  }

  /** The note of that name among `paths`, one in the flashcards folder (as the vault spells it, where decks are made) first. */
  private async findDeck(name: string, { paths, deckFolder }: VaultNow): Promise<{ path: string; text: string } | null> {
    const wantedName = name.trim().replace(/\.md$/i, "");
    const wanted = nameKey(wantedName);
    let named = paths.filter((p) => nameKey(baseNameOf(p)) === wanted);
    // "проверь меня по приливам" is the deck "приливы": the same words in another case or number.
    if (!named.length) named = paths.filter((p) => sameWordsByStem(baseNameOf(p), wantedName));
    // Decks are made at the top of the flashcards folder: for the vault root (""), in no folder.
    const pick = named.find((p) => (deckFolder ? isInFolder(p, deckFolder) : !p.includes("/"))) ?? named[0];
    if (!pick) return null;
    try {
      return { path: pick, text: await this.deps.host.vault.readNote(pick) };
    } catch (err) {
      throw new AgentError(`Could not read ${pick}: ${errorMessage(err)}`, "failed");
    }
  }

  /** A quiz's questions: shuffled, at most QUIZ_MAX_CARDS of them from anywhere in the deck, siblings of one card kept apart. */
  private order(cards: QuizCard[]): QuizCard[] {
    return apartFromSiblings(questionsUpToCap(shuffle(cards, this.deps.host.clock.now())));
  }

  private async load(key: string): Promise<QuizState | null> {
    const text = await this.deps.host.data.readText(fileOf(key));
    if (!text) return null;
    try {
      const state = JSON.parse(text) as QuizState;
      return state?.version === 1 && Array.isArray(state.cards) ? state : null;
    } catch {
      return null; // a damaged quiz file: start afresh rather than fail the chat
    }
  }

  private save(key: string, state: QuizState): Promise<void> {
    return this.deps.host.data.writeAtomic(fileOf(key), JSON.stringify(state));
  }
}

/** Cards made from notes when no deck matches ("quiz me on <topic>"). */
const QUIZ_FROM_NOTES_CARDS = 8;

/** Why the cards of the note at `path` are no questions, in words (after "… has no flashcards to quiz you on: "). */
function skipReason(skip: SrSkip, path: string, format: SrFormat): string {
  if (skip.why === "ignored-folder") return ignoredFolderText(path, skip.folder);
  if (skip.why === "ignored-tag") return `its tag ${skip.tag} is one of the Spaced Repetition plugin's "Tags to ignore"`;
  if (skip.why === "vault-root") {
    return `the Spaced Repetition plugin takes folders as decks ("Convert folders to decks and subdecks"), and a note at the vault root is in none. Move it into a folder`;
  }
  return `it has no flashcard tag, and the Spaced Repetition plugin reviews cards only in notes with one. Add ${format.tags[0]} to it`;
}

/** A quiz from notes that ends with missed cards opens the offer to write them to a deck. */
function withOffer(state: QuizState): QuizState {
  if (state.status !== "finished" || !state.fromNotes || state.fromNotes.offer !== "none") return state;
  return missedNewCards(state).length ? { ...state, fromNotes: { ...state.fromNotes, offer: "open" } } : state;
}

function fileOf(key: string): string {
  return `quiz/${key.replace(/[^A-Za-z0-9_-]/g, "_")}.json`;
}

function label(grade: Grade): string {
  return grade.verdict === "correct" ? "✅ Correct." : grade.verdict === "partial" ? "🟡 Partly right." : "❌ Not quite.";
}

/** Deterministic per start time: the order changes between quizzes, not between reloads of one. */
function shuffle<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let a = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    const j = a % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
