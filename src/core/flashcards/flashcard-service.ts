import { readFrontmatter } from "../indexing/frontmatter";
import type { VaultIndexApi } from "../indexing/vault-index-api";
import { AgentError, noNotesMatch } from "../notes/agent-error";
import { baseNameOf, folderAsSpelled, isInFolder, MAX_NAME_CHARS, nameKey, normalizeVaultPath, noteNameFor } from "../notes/note-paths";
import { sameWordsByStem } from "../indexing/text-analyzer";
import { countOf, cutAt } from "../util/text";
import { mentioningTopic, readableNote, significantWords } from "../notes/note-text";
import type { ChatModel } from "../ports/chat-model";
import type { Host } from "../ports/host";
import { NoteExistsError, NoteNotFoundError, type VaultPort } from "../ports/vault";
import type { KryptonSettings } from "../settings";
import { errorMessage, isAbortError, throwIfAborted } from "../util/errors";
import { localDate } from "../util/local-date";
import { ANKI_EXPORT_FOLDER, ankiExportText, type AnkiExport } from "./anki-export";
import { ignoredFolderText, parseCards, srIgnoredFolder } from "./card-parser";
import { FLASHCARD_LIMITS, generateCards, headingAbove, notePassages, type GenerationCounts, type Passage } from "./card-generator";
import { DECK_MARKER, clozeWriter, deckTags, formatCard, newCardKey, newDeckNote, type NewCard } from "./card-writer";
import { appendToDeck, deckSnapshot, notADeck, type DeckSnapshot } from "./deck-append";
import { loadSrFormat, srDefaultsRemark, type SrFormat } from "./sr-format";

export interface FlashcardsDeps {
  host: Host;
  settings: () => KryptonSettings;
  index: VaultIndexApi;
  chatModel: () => ChatModel | null;
}

export interface FlashcardRequest {
  /** A vault note to make cards from (the whole note, or `selection` of it). */
  notePath?: string;
  /** Text selected in notePath: cards come from it alone, still linked to notePath. */
  selection?: string;
  /** A topic: passages come from the index, like the topic summary. */
  topic?: string;
  /** Deck name; defaults to the note's title or the topic. */
  deck?: string;
  /** Cards at most (default 10, at most 30). */
  max?: number;
  signal?: AbortSignal;
}

export interface FlashcardRun {
  deckPath: string;
  deckName: string;
  /** True when this run created the deck note. */
  createdDeck: boolean;
  added: NewCard[];
  counts: GenerationCounts;
  /** Notes the passages came from. */
  sources: string[];
  /** Parts of a long source the cap left out (0 when all was read). */
  partsSkipped: number;
  /** Cloze cards written as question and answer: none of the user's SR cloze patterns can be written. */
  clozesAsBasic: number;
  /** Why the cards were written in SR's default format: its settings file cannot be read (SrFormat.problem). */
  srSettingsProblem?: string;
  /**
   * The entry of SR's "Folders to ignore" covering the deck (srIgnoredFolder): the cards are written all the same
   * (the user chose the folder), and the result says SR will not review them.
   */
  srIgnoredFolder?: string;
  /** Cards about a topic whose notes were matched by keywords only: why, as a sentence (SearchResult.keywordOnly). */
  keywordOnly?: string;
  text: string;
}

/**
 * Flashcards from a note, a selection or a topic, written in the Spaced Repetition plugin's format into a
 * deck note of Krypton's (never the source): created new, or appended through VaultPort.appendToNote so every
 * existing byte — scheduling comments included — stays as it was. One implementation for chat, commands,
 * CLI and MCP.
 */
export class FlashcardService {
  constructor(private readonly deps: FlashcardsDeps) {}

  async generate(request: FlashcardRequest): Promise<FlashcardRun> {
    const { host } = this.deps;
    const model = this.deps.chatModel();
    if (!model) throw new AgentError("No chat model is configured. Choose a chat provider and model in Krypton's settings.", "no-model");
    const max = clampMax(request.max);
    const format = await loadSrFormat(host.vault);
    // One listing and one flashcards folder for both the passages (passagesFor) and the deck note (findDeckPath).
    const now = await this.vaultNow();
    const { title, passages, sources, keywordOnly } = await this.passagesFor(request, now);
    if (!passages.length) throw new AgentError(`There is no text to make flashcards from in ${title}.`, "invalid-input");

    const deckName = cleanDeckName(request.deck ?? title);
    const deckPath = this.findDeckPath(deckName, now);
    const existingText = await this.readDeck(deckPath);
    const snapshot = existingText === null ? undefined : deckSnapshot(existingText, format);
    const existing = snapshot ? snapshot.keys : new Set<string>();

    const generated = await generateCards({ model, title, passages, max, format, existing, signal: request.signal });
    throwIfAborted(request.signal);
    const lines = generated.cards.map((c) => formatCard(c, format));
    const partsSkipped = generated.partsTotal - generated.partsUsed;
    let createdDeck = false;
    let added = generated.cards;
    if (lines.length) {
      const result = await this.write(deckPath, deckName, lines, generated.cards, snapshot, format);
      createdDeck = result.created;
      added = result.added;
      generated.counts.duplicates += generated.cards.length - added.length;
    }
    host.logger.info("flashcards: run", { deckPath, added: added.length, ...generated.counts, srSettingsProblem: format.problem });
    const run = {
      deckPath,
      deckName,
      createdDeck,
      added,
      counts: generated.counts,
      sources,
      partsSkipped,
      clozesAsBasic: clozesAsBasic(added, format),
      srSettingsProblem: format.problem,
      ...ignoredBySr(deckPath, format),
      ...(keywordOnly ? { keywordOnly } : {}),
    };
    return { ...run, text: flashcardRunText(run) };
  }

  /**
   * Cards about a topic, generated like generate() (same passages, grounded generator, askJson) but kept in
   * memory: nothing is written. The quiz uses this when no deck matches ("quiz me on <topic>"), passing the
   * vault's note paths and flashcards folder it has already (`now`, else read here). `format` is the SR
   * format the cards were checked against (each makes one card in it).
   */
  async draftFromTopic(
    topic: string,
    max: number,
    signal?: AbortSignal,
    now?: VaultNow,
  ): Promise<{ title: string; cards: NewCard[]; sources: string[]; format: SrFormat; keywordOnly?: string }> {
    const model = this.deps.chatModel();
    if (!model) throw new AgentError("No chat model is configured. Choose a chat provider and model in Krypton's settings.", "no-model");
    const format = await loadSrFormat(this.deps.host.vault);
    const { title, passages, sources, keywordOnly } = await this.passagesFor({ topic, signal }, now ?? (await this.vaultNow()));
    const generated = await generateCards({ model, title, passages, max: clampMax(max), format, existing: new Set(), signal });
    throwIfAborted(signal);
    return { title, cards: generated.cards, sources, format, ...(keywordOnly ? { keywordOnly } : {}) };
  }

  /** Writes cards made earlier (draftFromTopic) into a deck: created, or appended de-duplicated like generate(). */
  async addCards(deckNameWanted: string, cards: NewCard[]): Promise<FlashcardRun> {
    const format = await loadSrFormat(this.deps.host.vault);
    const deckName = cleanDeckName(deckNameWanted);
    const deckPath = this.findDeckPath(deckName, await this.vaultNow());
    const existingText = await this.readDeck(deckPath);
    const snapshot = existingText === null ? undefined : deckSnapshot(existingText, format);
    const fresh = cards.filter((c) => !snapshot?.keys.has(newCardKey(c, format)));
    const counts: GenerationCounts = { ungrounded: 0, duplicates: cards.length - fresh.length, unusable: 0 };
    let createdDeck = false;
    let added: NewCard[] = [];
    if (fresh.length) {
      const result = await this.write(deckPath, deckName, fresh.map((c) => formatCard(c, format)), fresh, snapshot, format);
      createdDeck = result.created;
      added = result.added;
      counts.duplicates += fresh.length - added.length;
    }
    const sources = [...new Set(cards.map((c) => c.source.replace(/#.*$/, "") + ".md"))];
    const run = { deckPath, deckName, createdDeck, added, counts, sources, partsSkipped: 0, clozesAsBasic: clozesAsBasic(added, format), srSettingsProblem: format.problem, ...ignoredBySr(deckPath, format) };
    return { ...run, text: flashcardRunText(run) };
  }

  /**
   * Writes a deck's cards in Obsidian_to_Anki's note format to a new note in "Anki exports/" (never the deck
   * itself; a taken name gets " 2", " 3"…). The deck must be a Krypton deck (frontmatter krypton-deck: true).
   */
  async exportAnki(deck: string): Promise<{ path: string; deckPath: string; exported: number; skipped: AnkiExport["skipped"]; text: string }> {
    const { vault } = this.deps.host;
    const wanted = deck.trim().replace(/\.md$/i, "");
    if (!wanted) throw new AgentError("Missing required parameter: deck", "invalid-input");
    const deckPath = wanted.includes("/") ? `${normalizeVaultPath(wanted, vault.configDir, "note path", "read")}.md` : this.findDeckPath(wanted, await this.vaultNow());
    const text = await this.readDeck(deckPath, "export");
    if (text === null) throw new AgentError(`No deck at ${deckPath}.`, "not-found");
    const format = await loadSrFormat(vault);
    // Read in SR's defaults, the user's own cards may be missing from the export: say why with each outcome.
    const defaults = format.problem ? `\n\n${srDefaultsRemark(format.problem, "read")}` : "";
    const cards = parseCards(text, format).cards;
    if (!cards.length) throw new AgentError(`${deckPath} has no cards to export.${defaults}`, "not-found");
    // The deck name as written (JSON-quoted by newDeckNote), read by the one frontmatter reader, which unescapes it.
    const named = readFrontmatter(text.split(/\r?\n/))?.fields.deck;
    const name = (typeof named === "string" && named.trim()) || deckPath.replace(/^.*\//, "").replace(/\.md$/i, "");
    const out = ankiExportText(name, deckPath.replace(/\.md$/i, ""), cards, localDate(this.deps.host.clock.now()));
    if (!out.exported) throw new AgentError(`None of the cards in ${deckPath} (${countOf(cards.length, "card")}) can be exported (${out.skipped[0]?.reason}).${defaults}`, "invalid-input");
    const base = `${await folderAsSpelled(ANKI_EXPORT_FOLDER, vault)}/${deckPath.replace(/^.*\//, "").replace(/\.md$/i, "")}`;
    for (let n = 1; n <= 100; n++) {
      const path = n === 1 ? `${base}.md` : `${base} ${n}.md`;
      if (await vault.exists(path)) continue;
      try {
        await vault.createNote(path, out.text);
      } catch (err) {
        if (err instanceof NoteExistsError) continue;
        throw new AgentError(`Could not create ${path}: ${errorMessage(err)}`, "failed");
      }
      const skippedText = out.skipped.length ? ` Skipped ${out.skipped.length}: ${out.skipped.map((s) => `"${s.front}" (${s.reason})`).join("; ")}.` : "";
      return { path, deckPath, exported: out.exported, skipped: out.skipped, text: `Exported ${countOf(out.exported, "card")} of [[${deckPath.replace(/\.md$/i, "")}]] to [[${path.replace(/\.md$/i, "")}]] for Obsidian_to_Anki.${skippedText}${defaults}` };
    }
    throw new AgentError(`Too many exports of ${deckPath} in ${ANKI_EXPORT_FOLDER}/: remove old ones first.`, "failed");
  }

  /**
   * Creates the deck, or appends to it when it exists (or appeared meanwhile); de-duplicates against what is there
   * at write time. `format` is the one the lines and the snapshot were made with.
   */
  private async write(
    deckPath: string,
    deckName: string,
    lines: string[],
    cards: NewCard[],
    snapshot: DeckSnapshot | undefined,
    format: SrFormat,
  ): Promise<{ created: boolean; added: NewCard[] }> {
    const { vault } = this.deps.host;
    const tags = deckTags(deckName, format);
    if (!(await vault.exists(deckPath))) {
      // Read before the model call, gone now: renamed or deleted meanwhile. A new deck here would undo a
      // deletion, or stand beside the renamed deck under one name.
      if (snapshot) throw new AgentError(`${deckPath} was moved or deleted while the cards were being made, so nothing was written. Ask again to make them.`, "failed");
      try {
        await vault.createNote(deckPath, newDeckNote(deckName, tags[0], lines, localDate(this.deps.host.clock.now())));
        return { created: true, added: cards };
      } catch (err) {
        if (!(err instanceof NoteExistsError)) throw new AgentError(`Could not create ${deckPath}: ${errorMessage(err)}`, "failed");
      }
    }
    try {
      const added = await appendToDeck(
        vault,
        deckPath,
        cards.map((card, i) => ({ card, line: lines[i] })),
        tags,
        format,
        snapshot,
      );
      return { created: false, added };
    } catch (err) {
      if (err instanceof AgentError) throw err;
      throw new AgentError(`Could not add cards to ${deckPath}: ${errorMessage(err)}`, "failed");
    }
  }

  /** The deck's text, or null when there is none yet; refuses a note that is not a Krypton deck, saying why for `use`. */
  private async readDeck(deckPath: string, use: "write" | "export" = "write"): Promise<string | null> {
    let text: string;
    try {
      text = await this.deps.host.vault.readNote(deckPath);
    } catch (err) {
      if (err instanceof NoteNotFoundError) return null;
      throw new AgentError(`Could not read ${deckPath}: ${errorMessage(err)}`, "failed");
    }
    if (parseCards(text.slice(0, 2000)).frontmatter[DECK_MARKER] !== "true") {
      // An export changes nothing: "choose another deck name" (for writing) would not help.
      if (use === "export") throw new AgentError(`${deckPath} is not a Krypton deck (no "${DECK_MARKER}: true" in its frontmatter): only decks Krypton made are exported.`, "invalid-input");
      throw notADeck(deckPath);
    }
    return text;
  }

  /**
   * The deck note a deck name means: the note of that name in the flashcards folder, case and spacing aside
   * (nameKey), at its real path; else that path, for a new deck. Obsidian finds a file only by its exact path even on a disk that
   * ignores case, and a case-sensitive disk would take a second deck beside the first. Two such notes are
   * refused by name, before any model call: cards must not land in whichever was listed first. A new deck goes
   * into the flashcards folder as the vault spells it (a disk that ignores case has one folder for both).
   */
  private findDeckPath(deckName: string, { paths, deckFolder }: VaultNow): string {
    // A deck is named, never pathed: its file name follows the one rule for names (note-paths.ts).
    const file = `${noteNameFor(cleanDeckName(deckName)) || "Deck"}.md`;
    const wanted = deckFolder ? `${deckFolder}/${file}` : file;
    const key = nameKey(wanted);
    const same = paths.filter((p) => nameKey(p) === key);
    if (same.length > 1) throw new AgentError(`More than one deck is named "${deckName}": ${same.join(", ")}. Rename or merge them.`, "invalid-input");
    if (same.length) return same[0];
    // "карточки по приливам" is the deck "приливы": the same words in another case or number.
    const inFolder = (p: string) => (deckFolder ? isInFolder(p, deckFolder) && !p.slice(deckFolder.length + 1).includes("/") : !p.includes("/"));
    const inflected = paths.filter((p) => inFolder(p) && sameWordsByStem(baseNameOf(p), baseNameOf(file)));
    if (inflected.length > 1) throw new AgentError(`More than one deck is named like "${deckName}": ${inflected.join(", ")}. Name one exactly.`, "invalid-input");
    return inflected[0] ?? wanted;
  }

  /** The passages to make cards from; never from a deck in the flashcards folder (`now.deckFolder`). */
  private async passagesFor(request: FlashcardRequest, { deckFolder }: VaultNow): Promise<{ title: string; passages: Passage[]; sources: string[]; keywordOnly?: string }> {
    const { vault } = this.deps.host;
    if (request.notePath) {
      const path = normalizeVaultPath(request.notePath, vault.configDir, "note path", "read");
      if (!/\.md$/i.test(path)) throw new AgentError(`Only markdown notes (.md) can be made into flashcards: ${path}`, "invalid-input");
      if (isInFolder(path, deckFolder)) throw new AgentError(`${path} is in the flashcards folder: make cards from your notes, not from a deck.`, "invalid-input");
      let content: string;
      try {
        content = await vault.readNote(path);
      } catch (err) {
        if (err instanceof NoteNotFoundError) throw new AgentError(`Note not found: ${path}`, "not-found");
        throw new AgentError(`Could not read ${path}: ${errorMessage(err)}`, "failed");
      }
      const { title, body } = readableNote(path, content);
      const target = path.replace(/\.md$/i, "");
      const selection = request.selection?.trim() ? request.selection : null;
      const passages = selection ? notePassages(selection, target, headingAbove(body, selection)) : notePassages(body, target);
      return { title, passages, sources: [path] };
    }
    const topic = (request.topic ?? "").replace(/\s+/g, " ").trim();
    if (!topic) throw new AgentError("Missing required parameter: note or topic", "invalid-input");
    if (topic.length > 200) throw new AgentError("The topic is too long (at most 200 characters).", "invalid-input");
    const status = this.deps.index.status();
    if (!(status.state === "ready" || (status.state === "indexing" && status.chunks > 0))) {
      throw new AgentError("The index is not ready yet: index the vault first, then ask for flashcards about a topic.", "index-not-ready");
    }
    let found;
    try {
      found = await this.deps.index.searchChunksWithReason(`notes about ${topic}`, { limit: 24, signal: request.signal });
    } catch (err) {
      if (isAbortError(err)) throw err;
      throw new AgentError(`Search failed: ${errorMessage(err)}`, "failed");
    }
    const { hits, keywordOnly } = found;
    const kept = mentioningTopic(
      hits.filter((h) => !isInFolder(h.chunk.path, deckFolder)),
      (h) => `${h.chunk.title}\n${h.chunk.headings.join("\n")}\n${h.chunk.text}`,
      significantWords(topic),
    ).slice(0, 8);
    if (!kept.length) throw noNotesMatch(topic, keywordOnly);
    const passages: Passage[] = [];
    for (const hit of kept) {
      const heading = hit.chunk.headings[hit.chunk.headings.length - 1];
      const target = hit.chunk.path.replace(/\.md$/i, "");
      const text = hit.chunk.text.slice(0, FLASHCARD_LIMITS.passageChars * 2);
      passages.push({ n: passages.length + 1, text, source: heading ? `${target}#${heading.replace(/[#^[\]|]/g, " ").trim()}` : target });
    }
    return { title: topic, passages, sources: [...new Set(kept.map((h) => h.chunk.path))], ...(keywordOnly ? { keywordOnly } : {}) };
  }

  private vaultNow(): Promise<VaultNow> {
    return vaultNow(this.deps.host.vault, this.deps.settings());
  }
}

/** What one call of the flashcards (or a quiz) reads of the vault: its note paths and the flashcards folder. */
export interface VaultNow {
  paths: readonly string[];
  /** The flashcards folder as the vault spells it (deckFolderAsSpelled). */
  deckFolder: string;
}

/** The vault's note paths (one listing) and its flashcards folder, read once per call and passed along. */
export async function vaultNow(vault: VaultPort, settings: KryptonSettings): Promise<VaultNow> {
  const [notes, deckFolder] = await Promise.all([vault.listNotes(), deckFolderAsSpelled(settings, vault)]);
  return { paths: notes.map((n) => n.path), deckFolder };
}

/**
 * The flashcards folder of the settings as the vault spells it (folderAsSpelled), so decks are read (quiz, goal
 * plans) where they are written, on a disk that ignores case too. "" for the vault root.
 */
export async function deckFolderAsSpelled(settings: KryptonSettings, vault: Pick<VaultPort, "configDir" | "listFolders">): Promise<string> {
  return folderAsSpelled(normalizeVaultPath(settings.flashcardsFolder, vault.configDir, "folder", "write"), vault);
}

function clampMax(max: number | undefined): number {
  if (max === undefined) return FLASHCARD_LIMITS.defaultCards;
  if (!Number.isFinite(max) || max < 1) throw new AgentError("The number of cards must be at least 1.", "invalid-input");
  return Math.min(FLASHCARD_LIMITS.maxCards, Math.floor(max));
}

function cleanDeckName(name: string): string {
  const clean = cutAt(name.replace(/\s+/g, " ").trim(), MAX_NAME_CHARS);
  if (!clean) throw new AgentError("The deck name is empty.", "invalid-input");
  return clean;
}

function ignoredBySr(deckPath: string, format: SrFormat): { srIgnoredFolder?: string } {
  const folder = srIgnoredFolder(deckPath, format);
  return folder === null ? {} : { srIgnoredFolder: folder };
}

function clozesAsBasic(added: readonly NewCard[], format: SrFormat): number {
  return clozeWriter(format) ? 0 : added.filter((c) => c.kind === "cloze").length;
}

export function flashcardRunText(run: Omit<FlashcardRun, "text">): string {
  const { counts } = run;
  const dropped = counts.ungrounded + counts.unusable;
  // With nothing added, say which: all already there, none usable (the Skipped line says why), or none suggested.
  const head = run.added.length
    ? `Added ${countOf(run.added.length, "flashcard")} to [[${run.deckPath.replace(/\.md$/i, "")}]]${run.createdDeck ? " (new deck)" : ""}.`
    : counts.duplicates && !dropped
      ? `No new flashcards: ${run.deckPath} already has cards for everything the model suggested.`
      : counts.duplicates || dropped
        ? "No new flashcards: none of the cards the model suggested could be added."
        : "No flashcards: the model suggested none for this text.";
  const notes: string[] = [];
  if (counts.duplicates) notes.push(`${counts.duplicates} already in the deck`);
  if (counts.ungrounded) notes.push(`${counts.ungrounded} dropped for citing no passage of the source`);
  if (counts.unusable) notes.push(`${counts.unusable} dropped as not a valid card`);
  if (run.partsSkipped) notes.push(`the last ${countOf(run.partsSkipped, "part")} of the source ${run.partsSkipped === 1 ? "was" : "were"} not read (card limit)`);
  const asBasic = run.clozesAsBasic
    ? `${countOf(run.clozesAsBasic, "cloze card")} written as question and answer: the Spaced Repetition plugin's "Cloze Patterns" setting has no pattern Krypton can write a cloze in.`
    : "";
  // Second, so that a notice showing the first two paragraphs shows it.
  const defaults =
    run.srSettingsProblem && run.added.length
      ? srDefaultsRemark(run.srSettingsProblem, "written")
      : "";
  // Cards SR never shows are no use unseen: said second too, ahead of the defaults remark.
  const ignored =
    run.srIgnoredFolder !== undefined && run.added.length
      ? `The Spaced Repetition plugin will not review the cards of ${run.deckPath}: ${ignoredFolderText(run.deckPath, run.srIgnoredFolder)}. Change that setting or Krypton's flashcards folder to have them reviewed.`
      : "";
  const list = run.added.map((c) => `- ${c.kind === "cloze" ? c.front : `${c.front} → ${c.back}`}`).join("\n");
  const keywordOnly = run.keywordOnly ? `_${run.keywordOnly}_` : "";
  return [head, ignored, defaults, notes.length ? `Skipped: ${notes.join("; ")}.` : "", asBasic, list, keywordOnly].filter(Boolean).join("\n\n");
}
