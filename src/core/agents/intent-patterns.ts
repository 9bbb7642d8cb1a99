/**
 * Pattern-based intent detection: the deterministic first line of the agents.
 *
 * Rules that keep false positives out ("how do I create a note in Obsidian?" must stay a chat question):
 * - A pattern must match the WHOLE message, from its start: a request is an imperative ("create a note
 *   on X"), optionally after politeness ("please", "can you", "hey Krypton,"). A question that merely
 *   contains the words ("how do I…", "what's the best way to write a note about…") never starts that way.
 * - Create needs "note(s) on/about/regarding/covering <topic>": "write a note template" has no topic.
 * - Current-note summaries must be the whole request ("summarize this note", optionally "please"/"for me");
 *   "summarize this note in French" carries instructions the agent would drop, so normal chat gets it.
 * - Arguments longer than MAX_ARGUMENT_CHARS are not a topic but a paragraph: normal chat handles those.
 * - A topic that only points at the conversation ("make a note about this", "…on our discussion") has no
 *   subject the patterns can see: normal chat (or the LLM classifier, which reads the history) decides.
 */

export type IntentKind = "create-note" | "search-notes" | "summarize-note" | "summarize-topic";

export interface DetectedIntent {
  intent: IntentKind;
  /** The topic or query; "" for summarize-note (the active note). */
  argument: string;
  /** Which detector decided. */
  source: "patterns" | "classifier";
}

export const MAX_ARGUMENT_CHARS = 200;
const MAX_MESSAGE_CHARS = 1000;

/** Politeness that may precede a request, any number of times ("hey krypton, can you please …"). */
const LEAD = String.raw`^(?:(?:hey|hi|hello|ok|okay)\s+krypton[,:!]?\s+|krypton[,:]\s*|(?:please|pls|kindly|now|ok|okay)[,]?\s+|(?:can|could|would|will)\s+you\s+|i(?:'d| would)\s+like\s+you\s+to\s+|i\s+want\s+you\s+to\s+|help\s+me\s+)*`;
/** Optional quantity/adjective words before "note" ("a short new note"). */
const NOTE_ADJ = String.raw`(?:(?:a|an|one|some)\s+)?(?:(?:new|short|quick|brief|small|little|simple|detailed|concise)\s+)*`;
const ABOUT = String.raw`(?:on|about|regarding|covering|on\s+the\s+topic\s+of|about\s+the\s+topic\s+of)`;
const THIS_NOTE = String.raw`(?:this|the\s+current|the\s+open|the\s+active|my\s+current|the\s+opened|current)\s+(?:note|page|document|file)`;
const SUMMARIZE = String.raw`(?:summari[sz]e|sum\s+up|recap)`;
const A_SUMMARY = String.raw`(?:give|write|make|get|show|create)\s+(?:me\s+)?(?:a\s+)?(?:(?:short|brief|quick|concise)\s+)?(?:summary|overview|recap)\s+of`;
const MY_NOTES = String.raw`(?:(?:all\s+)?(?:of\s+)?(?:my|the)\s+notes|notes)`;

const POINTS_AT_CONVERSATION =
  /^(?:(?:all\s+)?(?:this|that|it|these|those|them|above|the\s+above|what\s+(?:we|you|i)\s+(?:just\s+)?(?:discussed|said|talked\s+about))|(?:this|that|our|the|my)\s+(?:conversation|discussion|chat|answer|reply|response|thread|last\s+(?:answer|message|reply)))$/i;

const RULES: { intent: IntentKind; patterns: RegExp[] }[] = [
  {
    intent: "create-note",
    patterns: [
      re(String.raw`(?:create|make|write|generate|draft|start)\s+(?:me\s+)?${NOTE_ADJ}notes?\s+${ABOUT}\s+(.+)`),
    ],
  },
  {
    intent: "summarize-note",
    patterns: [
      re(String.raw`${SUMMARIZE}\s+${THIS_NOTE}`),
      re(String.raw`${A_SUMMARY}\s+${THIS_NOTE}`),
      re(String.raw`what(?:'s|\s+is)\s+${THIS_NOTE}\s+about`),
      re(String.raw`tl;?dr\s+(?:of\s+)?${THIS_NOTE}`),
    ],
  },
  {
    intent: "summarize-topic",
    patterns: [
      re(String.raw`${SUMMARIZE}\s+${MY_NOTES}\s+${ABOUT}\s+(.+)`),
      re(String.raw`${SUMMARIZE}\s+what\s+(?:my|the)\s+notes\s+say\s+${ABOUT}\s+(.+)`),
      re(String.raw`${A_SUMMARY}\s+${MY_NOTES}\s+${ABOUT}\s+(.+)`),
      re(String.raw`what\s+do\s+(?:all\s+)?(?:my|the)\s+notes\s+say\s+${ABOUT}\s+(.+)`),
    ],
  },
  {
    intent: "search-notes",
    patterns: [
      re(
        String.raw`(?:find|search\s+for|look\s+for|look\s+up|show|show\s+me|list|get|give\s+me)\s+(?:me\s+)?(?:all\s+)?(?:(?:of\s+)?(?:my|the)\s+)?notes?\s+(?:on|about|regarding|mentioning|that\s+mention|that\s+talk\s+about|related\s+to|containing|with)\s+(.+)`,
      ),
      re(String.raw`search\s+(?:through\s+|in\s+)?(?:all\s+)?(?:(?:of\s+)?my\s+|the\s+)?(?:notes|vault)\s+(?:for|about|on)\s+(.+)`),
      re(
        String.raw`which\s+(?:of\s+my\s+)?notes\s+(?:talk\s+about|mention|discuss|cover|are\s+about|contain|reference|say\s+something\s+about)\s+(.+)`,
      ),
      re(String.raw`do\s+i\s+have\s+(?:any\s+)?notes\s+(?:on|about|regarding|mentioning)\s+(.+)`),
    ],
  },
];

/** The intent of a chat message, or null when it is not a request an agent handles. */
export function detectIntent(message: string): DetectedIntent | null {
  // A request is one short sentence; a long message is a chat message (and never costs a regex scan).
  if (message.length > MAX_MESSAGE_CHARS) return null;
  const text = normalizeMessage(message);
  if (!text) return null;
  for (const rule of RULES) {
    for (const pattern of rule.patterns) {
      const m = pattern.exec(text);
      if (!m) continue;
      if (rule.intent === "summarize-note") return { intent: rule.intent, argument: "", source: "patterns" };
      const argument = cleanArgument(m[1] ?? "");
      if (!argument || argument.length > MAX_ARGUMENT_CHARS || POINTS_AT_CONVERSATION.test(argument)) return null;
      return { intent: rule.intent, argument, source: "patterns" };
    }
  }
  return null;
}

/** One line, straight quotes, no trailing punctuation or trailing politeness. */
export function normalizeMessage(message: string): string {
  let text = message.replace(/[\u2018\u2019]/g, "'").replace(/[\u201c\u201d]/g, '"').replace(/\s+/g, " ").trim();
  // Repeated, because "… for me, please?" has two.
  for (let i = 0; i < 3; i++) {
    text = text
      .replace(/[\s.!?…]+$/u, "")
      .replace(/[\s,]+(?:please|pls|for\s+me|thanks|thank\s+you)$/i, "")
      .trim();
  }
  return text;
}

/** Strips quotes and brackets around a topic ("'AWS'", "[[AWS]]") and trailing punctuation. */
export function cleanArgument(raw: string): string {
  let arg = raw.trim().replace(/[\s.!?,;:…]+$/u, "");
  for (let i = 0; i < 2; i++) {
    const wrapped = /^(?:"(.*)"|'(.*)'|`(.*)`|\[\[(.*)\]\]|\*\*(.*)\*\*)$/s.exec(arg);
    if (!wrapped) break;
    arg = (wrapped.slice(1).find((g) => g !== undefined) ?? "").trim();
  }
  return arg;
}

function re(body: string): RegExp {
  return new RegExp(`${LEAD}${body}$`, "iu");
}
