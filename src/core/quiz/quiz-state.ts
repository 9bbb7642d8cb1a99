import { cardKey, formatCard, withoutLineMarkers, type NewCard } from "../flashcards/card-writer";
import { parseCards, type ParsedCard } from "../flashcards/card-parser";
import { askCloze, clozeSiblings } from "../flashcards/sr-cloze";
import type { SrFormat } from "../flashcards/sr-format";
import { noteLink } from "../notes/note-paths";
import { countOf } from "../util/text";

/**
 * The quiz as a plain state machine, host-neutral and serialisable (it is saved per conversation under
 * .krypton/quiz/ so it survives switching conversations and restarts). No I/O and no model here: grading
 * that needs the model arrives as a Grade from outside (quiz-service.ts).
 */
export interface QuizCard {
  kind: "basic" | "reversed" | "cloze" | "multiline";
  /** What is asked (cloze: the sentence with the deletion shown as [...]). */
  prompt: string;
  answer: string;
  /** Where the card lives, for the summary ("Flashcards/AWS.md"). */
  source: string;
  /**
   * The card (its index in the list the quiz was made from) this question is one SR review card of: a reversed
   * card's two directions and a cloze's siblings share it. Absent in quizzes saved before it existed.
   */
  of?: number;
}

export type Verdict = "correct" | "partial" | "wrong" | "skipped";

export interface Grade {
  verdict: Verdict;
  /** 0..1 */
  score: number;
  feedback: string;
  /** "local" (exact or cloze match) or "model". */
  by: "local" | "model";
}

export interface QuizState {
  version: 1;
  title: string;
  cards: QuizCard[];
  index: number;
  hints: number;
  results: { card: number; answer: string; grade: Grade }[];
  status: "active" | "finished";
  /**
   * Set when no deck matched and the cards were made from the vault's notes in memory: the generated cards
   * (a question's `of` is its card's index here), so the missed ones can be written to a deck when the user
   * says yes. `offer` is open from the end of the quiz until the user answers it.
   */
  fromNotes?: { topic: string; cards: NewCard[]; offer: "none" | "open" | "done" };
}

export const QUIZ_MAX_CARDS = 20;

/**
 * Cards generated from notes (not yet in any deck) as quiz questions, asked as a deck's cards are: each is read
 * back as SR will read it once written (formatCard, then parseCards, in `format`, the one they were checked
 * against), so a cloze asks its deletions one sibling at a time and a reversed card both ways. `of` is the
 * card's index in `cards`.
 */
export function quizCardsFromNew(cards: readonly NewCard[], format: SrFormat): QuizCard[] {
  return cards
    .flatMap((c, i) => {
      const read = parseCards(formatCard(c, format), format).cards[0];
      return read ? reviewQuestions(read, c.source.replace(/#.*$/, "") + ".md", i) : [];
    });
}

/** The generated cards the user missed (for "make cards from the missed ones"), each once however many of its questions were missed. */
export function missedNewCards(state: QuizState): NewCard[] {
  if (!state.fromNotes) return [];
  // A quiz saved before `of` existed asked each generated card once, in the same order.
  const missed = new Set(state.results.filter((r) => r.grade.verdict !== "correct").map((r) => state.cards[r.card]?.of ?? r.card));
  return [...missed].map((i) => state.fromNotes!.cards[i]).filter((c): c is NewCard => c !== undefined);
}

/** Cards from a deck in quiz form, one question per review card SR makes of them (its reviewCards). */
export function quizCardsFromDeck(cards: readonly ParsedCard[], source: string): QuizCard[] {
  return cards.flatMap((c, i) => reviewQuestions(c, source, i));
}

/**
 * The first QUIZ_MAX_CARDS questions of shuffled ones, taken a whole card at a time (a reversed card's two
 * directions, a cloze's siblings): capped before shuffling, a big deck's quiz would always be its first cards.
 * A card with more questions than are left is passed over for a smaller one; when no card fits, the first
 * QUIZ_MAX_CARDS questions are taken.
 */
export function questionsUpToCap(shuffled: readonly QuizCard[]): QuizCard[] {
  const byCard = new Map<number | QuizCard, QuizCard[]>();
  for (const q of shuffled) {
    const key = q.of ?? q;
    const group = byCard.get(key);
    if (group) group.push(q);
    else byCard.set(key, [q]);
  }
  const out: QuizCard[] = [];
  for (const questions of byCard.values()) if (out.length + questions.length <= QUIZ_MAX_CARDS) out.push(...questions);
  // Every card has more questions than a quiz asks (a cloze of 24 deletions): some of them, not an empty quiz.
  return out.length ? out : shuffled.slice(0, QUIZ_MAX_CARDS);
}

/**
 * One card's questions, as SR expands it into review cards (its question-type.ts, CardFrontBackUtil.expand):
 * a reversed card (`:::`, `??`) asks front→back, then back→front; a cloze one sibling at a time (deletions
 * sharing a number together; a sibling asking nothing is no question).
 */
function reviewQuestions(c: ParsedCard, source: string, of: number): QuizCard[] {
  if (c.kind === "cloze") {
    return clozeSiblings({ clozes: c.clozes, reviewCards: c.reviewCards })
      .filter((sibling) => sibling.ask.length)
      .map((sibling) => ({
        kind: "cloze",
        prompt: stripLink(askCloze(c.front, c.clozes, sibling)),
        answer: sibling.ask.map((i) => c.clozes[i].answer).join(", "),
        source,
        of,
      }));
  }
  const front = stripLink(c.front);
  const back = stripLink(c.back);
  if (!front || !back) return [];
  const kind = c.kind === "basic" || c.kind === "reversed" ? c.kind : "multiline";
  const ask: QuizCard = { kind, prompt: front, answer: back, source, of };
  return c.kind === "reversed" || c.kind === "multiline-reversed" ? [ask, { ...ask, prompt: back, answer: front }] : [ask];
}

/**
 * The questions in their order, but no two review cards of one card (`of`: a reversed card's two directions, a
 * cloze's siblings) back to back where another question can go between: the second would be asked right after
 * its answer was shown. Each turn takes the first question that is not a sibling of the one before, unless a
 * card holds more than half the questions left: then one of its own, or two of them would meet later.
 */
export function apartFromSiblings(cards: readonly QuizCard[]): QuizCard[] {
  const left = [...cards];
  const out: QuizCard[] = [];
  while (left.length) {
    const last = out[out.length - 1]?.of;
    const apart = (c: QuizCard) => c.of === undefined || c.of !== last;
    const crowded = left.find((c) => c.of !== undefined && apart(c) && 2 * left.filter((d) => d.of === c.of).length > left.length);
    out.push(...left.splice(left.indexOf(crowded ?? left.find(apart) ?? left[0]), 1));
  }
  return out;
}

/** A side of a card as the quiz shows it: no trailing source link, scheduling comment or line-start markers ("- ", "> "). */
function stripLink(text: string): string {
  return withoutLineMarkers(
    text
      .replace(/\s*\[\[[^\]]*\]\]\s*$/g, "")
      .replace(/<!--SR:[^>]*-->/g, "")
      .trim(),
  ).trim();
}

export function startQuiz(title: string, cards: QuizCard[]): QuizState {
  return { version: 1, title, cards, index: 0, hints: 0, results: [], status: cards.length ? "active" : "finished" };
}

export type QuizCommand = { type: "hint" } | { type: "skip" } | { type: "stop" } | { type: "answer"; text: string };

/** What the user's message means while a quiz runs. */
export function readCommand(message: string): QuizCommand {
  const text = message.trim().toLowerCase().replace(/[.!?]+$/, "");
  if (/^(?:hint|give me a hint|a hint|clue)$/.test(text)) return { type: "hint" };
  if (/^(?:skip|pass|next|i don'?t know|no idea|dunno)$/.test(text)) return { type: "skip" };
  if (/^(?:stop|quit|end|stop (?:the )?quiz|end (?:the )?quiz|quit (?:the )?quiz|exit)$/.test(text)) return { type: "stop" };
  return { type: "answer", text: message.trim() };
}

/**
 * Grades without the model when it can: a cloze answer, or an answer equal to the card's (cardKey: ignoring case,
 * punctuation and markup, not signs: "5" is not "-5", "C" not "C++"). Null: free text the model must judge.
 */
export function gradeLocally(card: QuizCard, answer: string): Grade | null {
  const given = cardKey(answer);
  if (given && given === cardKey(card.answer)) return { verdict: "correct", score: 1, feedback: "Correct.", by: "local" };
  if (card.kind === "cloze") return { verdict: "wrong", score: 0, feedback: `The answer is: ${card.answer}`, by: "local" };
  return null;
}

/**
 * A hint: the answer's first letters, more with each hint for the same card: one more word's, then, once every
 * word has its start shown, a letter more of each (never a whole word), so a one-word answer's second hint is
 * not its first again.
 */
export function hintFor(card: QuizCard, hintsSoFar: number): string {
  const words = card.answer.split(/\s+/);
  const reveal = Math.min(words.length, hintsSoFar + 1);
  const more = Math.max(0, hintsSoFar + 1 - words.length);
  const start = (w: string) => Math.max(1, Math.min(w.length - 1, Math.ceil(w.length / 3) + more));
  return words.map((w, i) => (i < reveal ? `${w.slice(0, start(w))}…` : "…")).join(" ");
}

export function record(state: QuizState, answer: string, grade: Grade): QuizState {
  const results = [...state.results, { card: state.index, answer, grade }];
  const index = state.index + 1;
  return { ...state, results, index, hints: 0, status: index >= state.cards.length ? "finished" : "active" };
}

export function stop(state: QuizState): QuizState {
  return { ...state, status: "finished" };
}

export function currentCard(state: QuizState): QuizCard | null {
  return state.status === "active" ? (state.cards[state.index] ?? null) : null;
}

export function questionText(state: QuizState): string {
  const card = currentCard(state);
  if (!card) return "";
  const ask = card.kind === "cloze" ? "Fill in the blank" : "Question";
  return `**${ask} ${state.index + 1} of ${state.cards.length}:** ${card.prompt}\n\n_Answer, or say "hint", "skip" or "stop"._`;
}

/** Score, the missed cards, and the offer to make cards from them. */
export function summaryText(state: QuizState): string {
  const asked = state.results.length;
  const points = state.results.reduce((sum, r) => sum + r.grade.score, 0);
  const missed = state.results.filter((r) => r.grade.verdict !== "correct");
  const lines = [`**Quiz finished: ${state.title}.** Score: ${round(points)} of ${asked}${asked < state.cards.length ? ` (stopped after ${asked} of ${state.cards.length})` : ""}.`];
  if (missed.length) {
    // What "yes" writes: generated cards, each once however many of its questions (both directions, deletions) were missed.
    const cardsToAdd = missedNewCards(state).length;
    lines.push("", "Missed:");
    for (const r of missed) {
      const card = state.cards[r.card];
      lines.push(`- ${card.prompt} → **${card.answer}** (${r.grade.verdict === "skipped" ? "skipped" : `you said: ${r.answer}`})`);
    }
    // Only cards made from notes are in no deck yet; a deck's missed cards are already where SR reviews them.
    const deck = state.cards[missed[0].card]?.source;
    lines.push(
      "",
      state.fromNotes
        ? `Want to practise these? Say "yes" to add the ${countOf(cardsToAdd, "missed card")} to the deck "${state.fromNotes.topic}".`
        : `These cards stay in ${deck ? noteLink(deck) : "the deck"}: Spaced Repetition schedules their reviews (a quiz does not change them).`,
    );
  }
  return lines.join("\n");
}

function round(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
