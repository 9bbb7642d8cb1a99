import type { VaultPort } from "../ports/vault";
import { errorMessage } from "../util/errors";
import { DEFAULT_CLOZE_PATTERNS, LEGACY_CLOZE_PATTERNS } from "./sr-cloze";

/**
 * The Spaced Repetition plugin's card syntax, as the user configured it. Defaults are the plugin's own;
 * users often change "::" because Dataview inline fields use it, so separators come from its data.json.
 */
export interface SrFormat {
  singleLine: string;
  singleLineReversed: string;
  multiLine: string;
  multiLineReversed: string;
  /** A line that ends a multi-line or cloze card instead of a blank line ("" = a blank line ends it). */
  endMarker: string;
  /** Tags that mark decks ("#flashcards"); nested tags ("#flashcards/bio") are sub-decks. */
  tags: string[];
  /**
   * SR's "Tags to ignore" (flashcardTagsToIgnore): a note with one of them, or a sub-tag ("#archived/old"), in
   * its frontmatter or text has no cards for SR (ParsedDeck.ignoredTag).
   */
  tagsToIgnore: string[];
  /** SR's clozePatterns setting (see sr-cloze.ts): which delimiters make clozes, with numbers and hints. */
  clozePatterns: string[];
  /** SR writes its scheduling comment on the card's last line instead of the next one. */
  commentOnSameLine: boolean;
  /**
   * SR's "Convert folders to decks and subdecks" (convertFoldersToDecks), its alternative to flashcard tags: a
   * note's folder path is the deck of all its cards, tagged or not, and a note at the vault root is in no deck.
   */
  convertFoldersToDecks: boolean;
  /**
   * SR's "Folders to ignore" (noteFoldersToIgnore, a list in data.json; one per line in its settings): SR loads no
   * note whose path starts with one of them or matches it as a glob ("Archive", "**\/*.excalidraw.md"), so
   * it reviews none of their cards (srIgnoredFolder).
   */
  foldersToIgnore: string[];
  /**
   * Why the user's SR settings could not be used, when its data.json exists but cannot be read: these are SR's
   * defaults standing in, and results that wrote or read cards with them say so (srDefaultsRemark).
   */
  problem?: string;
}

export const DEFAULT_SR_FORMAT: SrFormat = {
  singleLine: "::",
  singleLineReversed: ":::",
  multiLine: "?",
  multiLineReversed: "??",
  endMarker: "",
  tags: ["#flashcards"],
  tagsToIgnore: [],
  clozePatterns: DEFAULT_CLOZE_PATTERNS,
  commentOnSameLine: false,
  convertFoldersToDecks: false,
  // SR's own default, which it also merges into settings saved before it had one (plugin-data-manager.ts loadData).
  foldersToIgnore: ["**/*.excalidraw.md"],
};

/**
 * What a result made with SR's defaults in place of the user's unreadable settings (SrFormat.problem) says, in
 * the same words wherever cards are written (flashcards) or decks read (quiz, goal plan, Anki export): cards
 * the user keeps in other separators or tags are then not written or found as theirs.
 */
export function srDefaultsRemark(problem: string, cards: "written" | "read"): string {
  const [done, does] = cards === "written" ? ["Written", "writes"] : ["Read", "reads"];
  return `${done} in the Spaced Repetition plugin's default card format (question::answer, #flashcards): ${problem}. Fix it and Krypton ${does} your own separators, tags and cloze patterns.`;
}

/** Where the plugin keeps its settings, relative to the vault's config folder. */
export const SR_DATA_JSON = "plugins/obsidian-spaced-repetition/data.json";

/**
 * Reads the user's separators from an SR data.json text (`where` names it in `problem`); a setting missing or
 * odd keeps its default, a file that is not JSON settings gives the defaults with the problem.
 */
export function srFormatFromData(json: string | null, where = SR_DATA_JSON): SrFormat {
  if (!json) return { ...DEFAULT_SR_FORMAT };
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (err) {
    return { ...DEFAULT_SR_FORMAT, problem: `${where} is not valid JSON (${errorMessage(err)})` };
  }
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  // No "settings" is SR never having saved any: its defaults are the user's then.
  if (!isRecord(data) || (data.settings !== undefined && !isRecord(data.settings))) {
    return { ...DEFAULT_SR_FORMAT, problem: `${where} holds no settings object` };
  }
  const settings = data.settings;
  if (!settings) return { ...DEFAULT_SR_FORMAT };
  const text = (key: string, fallback: string) => {
    const v = settings[key];
    return typeof v === "string" && v.trim() !== "" ? v.trim() : fallback;
  };
  const flag = (key: string, fallback: boolean) => (typeof settings[key] === "boolean" ? (settings[key]) : fallback);
  const tagList = (v: unknown) => (Array.isArray(v) ? v.filter((t): t is string => typeof t === "string" && t.startsWith("#") && t.length > 1) : []);
  const tags = tagList(settings.flashcardTags);
  const endMarker = settings.multilineCardEndMarker;
  // In current SR clozePatterns decide; the convert* flags only seed it on upgrade (upgradeSettings).
  const clozePatterns = Array.isArray(settings.clozePatterns)
    ? settings.clozePatterns.filter((p): p is string => typeof p === "string" && p.trim() !== "")
    : [
        ...(flag("convertHighlightsToClozes", true) ? [LEGACY_CLOZE_PATTERNS.highlights] : []),
        ...(flag("convertBoldTextToClozes", false) ? [LEGACY_CLOZE_PATTERNS.bold] : []),
        ...(flag("convertCurlyBracketsToClozes", false) ? [LEGACY_CLOZE_PATTERNS.curly] : []),
      ];
  return {
    singleLine: text("singleLineCardSeparator", DEFAULT_SR_FORMAT.singleLine),
    singleLineReversed: text("singleLineReversedCardSeparator", DEFAULT_SR_FORMAT.singleLineReversed),
    multiLine: text("multilineCardSeparator", DEFAULT_SR_FORMAT.multiLine),
    multiLineReversed: text("multilineReversedCardSeparator", DEFAULT_SR_FORMAT.multiLineReversed),
    endMarker: typeof endMarker === "string" ? endMarker.trim() : "",
    tags: tags.length ? tags : [...DEFAULT_SR_FORMAT.tags],
    tagsToIgnore: tagList(settings.flashcardTagsToIgnore),
    clozePatterns,
    commentOnSameLine: flag("cardCommentOnSameLine", false),
    convertFoldersToDecks: flag("convertFoldersToDecks", false),
    // Empty entries dropped: SR's settings box never saves one, and "" would be a prefix of every path.
    foldersToIgnore: Array.isArray(settings.noteFoldersToIgnore)
      ? settings.noteFoldersToIgnore.filter((f): f is string => typeof f === "string" && f !== "")
      : [...DEFAULT_SR_FORMAT.foldersToIgnore],
  };
}

/** The SR plugin's format in this vault: its data.json when installed, else its defaults (with the problem). */
export async function loadSrFormat(vault: VaultPort): Promise<SrFormat> {
  const where = `${vault.configDir}/${SR_DATA_JSON}`;
  let json: string | null;
  try {
    json = await vault.readConfigFile(SR_DATA_JSON);
  } catch (err) {
    return { ...DEFAULT_SR_FORMAT, problem: `${where} could not be read (${errorMessage(err)})` };
  }
  return srFormatFromData(json, where);
}
