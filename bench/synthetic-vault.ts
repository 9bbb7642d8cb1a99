/**
 * A seeded synthetic vault: realistic-looking notes (frontmatter, headings, paragraphs, lists, wikilinks,
 * inline tags, the odd code block or callout) on a handful of topics, so keyword and vector search have
 * something to find. Same seed and size, same vault, byte for byte.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { chunkNote } from "../src/core/indexing/markdown-chunker";
import { DEFAULT_SETTINGS } from "../src/core/settings";
import { seededRandom } from "../tests/support/seeded-random";

export interface SyntheticNote {
  path: string;
  content: string;
}

export interface SyntheticVault {
  notes: SyntheticNote[];
  /** Chunks the real chunker makes of these notes at the default chunk size. */
  chunkCount: number;
  /** Search queries drawn from the same vocabulary (2–3 topic words). */
  queries: string[];
}

export interface VaultSpec {
  seed: number;
  /** Stop once the vault holds at least this many notes... */
  notes?: number;
  /** ...or at least this many chunks (whichever is given). */
  chunks?: number;
  queries?: number;
}


const TOPICS: Record<string, string[]> = {
  "Machine Learning": [
    "gradient", "descent", "learning", "rate", "neural", "network", "backpropagation", "loss", "optimizer", "momentum",
    "overfitting", "regularization", "dropout", "embedding", "transformer", "attention", "tokenizer", "batch", "epoch",
    "validation", "accuracy", "precision", "recall", "convolution", "activation", "softmax", "weights", "training",
  ],
  Cooking: [
    "sourdough", "starter", "flour", "hydration", "oven", "garlic", "onion", "tomato", "simmer", "roast", "spices",
    "cumin", "paprika", "olive", "oil", "butter", "knead", "dough", "ferment", "broth", "lentils", "rice", "recipe",
    "skillet", "caramelize", "season", "salt", "pepper",
  ],
  Projects: [
    "milestone", "deadline", "stakeholder", "budget", "roadmap", "release", "deploy", "pipeline", "backlog", "sprint",
    "estimate", "risk", "dependency", "review", "launch", "migration", "rollout", "metrics", "dashboard", "incident",
    "postmortem", "owner", "scope", "requirements", "prototype", "feedback", "retrospective", "priority",
  ],
  History: [
    "empire", "dynasty", "treaty", "revolution", "medieval", "renaissance", "archive", "manuscript", "monarchy",
    "republic", "colonial", "trade", "silk", "route", "byzantine", "ottoman", "parliament", "reform", "industrial",
    "steam", "railway", "census", "chronicle", "battle", "siege", "fortress", "cathedral", "guild",
  ],
  Finance: [
    "budget", "savings", "index", "fund", "portfolio", "dividend", "inflation", "interest", "mortgage", "pension",
    "allocation", "bonds", "equity", "expense", "invoice", "tax", "deduction", "cashflow", "emergency", "rebalance",
    "compound", "yield", "broker", "account", "statement", "forecast", "spending", "income",
  ],
  Biology: [
    "cell", "protein", "enzyme", "membrane", "mitochondria", "genome", "mutation", "evolution", "species", "habitat",
    "photosynthesis", "chlorophyll", "neuron", "synapse", "hormone", "immune", "antibody", "bacteria", "virus",
    "ecosystem", "predator", "metabolism", "ribosome", "transcription", "allele", "phenotype", "fossil", "tissue",
  ],
  Travel: [
    "itinerary", "flight", "train", "hostel", "museum", "harbor", "mountain", "hiking", "trail", "beach", "market",
    "passport", "visa", "luggage", "ferry", "island", "castle", "old", "town", "cafe", "sunset", "guidebook", "map",
    "booking", "layover", "coast", "valley", "village",
  ],
};

const COMMON = [
  "the", "a", "of", "and", "to", "in", "is", "that", "for", "it", "with", "as", "on", "this", "be", "by", "we", "can",
  "more", "when", "about", "which", "after", "before", "because", "often", "usually", "every", "first", "then", "next",
  "important", "simple", "useful", "notes", "idea", "remember", "check", "later", "today", "week", "small", "large",
];

const TOPIC_NAMES = Object.keys(TOPICS);

/** Generates notes until the spec's note or chunk count is reached. */
export function generateVault(spec: VaultSpec): SyntheticVault {
  const random = seededRandom(spec.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));

  const notes: SyntheticNote[] = [];
  const titles: string[] = [];
  let chunkCount = 0;
  const maxChars = DEFAULT_SETTINGS.chunkMaxChars;
  const enough = () =>
    (spec.notes !== undefined && notes.length >= spec.notes) || (spec.chunks !== undefined && chunkCount >= spec.chunks);
  if (spec.notes === undefined && spec.chunks === undefined) throw new Error("generateVault needs notes or chunks");

  const sentence = (topic: string): string => {
    const words = TOPICS[topic];
    const n = between(8, 20);
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(random() < 0.45 ? pick(words) : pick(COMMON));
    out[0] = out[0][0].toUpperCase() + out[0].slice(1);
    return out.join(" ") + (random() < 0.1 ? "?" : ".");
  };
  const paragraph = (topic: string): string => {
    const parts: string[] = [];
    const n = between(2, 6);
    for (let i = 0; i < n; i++) {
      let s = sentence(topic);
      if (titles.length > 0 && random() < 0.15) s += ` See [[${pick(titles)}]].`;
      if (random() < 0.05) s += ` #${topic.toLowerCase().replace(/\s+/g, "-")}/${pick(TOPICS[topic])}`;
      parts.push(s);
    }
    return parts.join(" ");
  };

  while (!enough()) {
    const i = notes.length;
    const topic = TOPIC_NAMES[i % TOPIC_NAMES.length];
    const words = TOPICS[topic];
    const title = `${cap(pick(words))} ${pick(words)} ${i}`;
    const folder = `${topic}/${String.fromCharCode(65 + (i % 8))}`;
    const lines: string[] = ["---", `tags: [${topic.toLowerCase().replace(/\s+/g, "-")}, ${pick(words)}]`];
    if (random() < 0.3) lines.push(`aliases: [${cap(pick(words))} notes ${i}]`);
    lines.push(`created: 2024-${pad(between(1, 12))}-${pad(between(1, 28))}`, "---", `# ${title}`, "", paragraph(topic), "");

    const sections = between(2, 6);
    for (let s = 0; s < sections; s++) {
      lines.push(`## ${cap(pick(words))} and ${pick(words)}`, "");
      const blocks = between(1, 3);
      for (let b = 0; b < blocks; b++) {
        const kind = random();
        if (kind < 0.6) {
          lines.push(paragraph(topic));
        } else if (kind < 0.8) {
          const items = between(3, 7);
          for (let k = 0; k < items; k++) lines.push(`- ${sentence(topic)}`);
        } else if (kind < 0.88) {
          lines.push("```python", `def ${pick(words)}_${k3(i, s)}(x):`, `    # ${sentence(topic)}`, `    return x * ${between(2, 9)}`, "```");
        } else if (kind < 0.95) {
          lines.push(`> [!note] ${cap(pick(words))}`, `> ${sentence(topic)}`, `> ${sentence(topic)}`);
        } else {
          lines.push(`### ${cap(pick(words))}`, "", paragraph(topic));
        }
        lines.push("");
      }
    }
    const content = lines.join("\n");
    const path = `${folder}/${title}.md`;
    notes.push({ path, content });
    titles.push(title);
    chunkCount += chunkNote(path, content, { maxChars }).chunks.length;
  }

  const queries: string[] = [];
  for (let q = 0; q < (spec.queries ?? 100); q++) {
    const words = TOPICS[pick(TOPIC_NAMES)];
    const n = between(2, 3);
    const terms: string[] = [];
    for (let k = 0; k < n; k++) terms.push(pick(words));
    queries.push(terms.join(" "));
  }
  return { notes, chunkCount, queries };
}

/** Writes the notes under root (plus .obsidian/app.json so it looks like a vault). */
export function writeVault(root: string, notes: SyntheticNote[]): void {
  mkdirSync(join(root, ".obsidian"), { recursive: true });
  writeFileSync(join(root, ".obsidian", "app.json"), "{}");
  const made = new Set<string>();
  for (const note of notes) {
    const file = join(root, note.path);
    const dir = dirname(file);
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    writeFileSync(file, note.content);
  }
}

function cap(word: string): string {
  return word[0].toUpperCase() + word.slice(1);
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

function k3(i: number, s: number): string {
  return `${i}_${s}`;
}
