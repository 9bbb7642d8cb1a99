// "Create note from answer": the answer (and its sources as links, so [n] markers keep meaning) saved as
// a new note in the configured folder. Names and paths come from the agents' note-path rules; an
// existing file is never replaced (VaultPort.createNote refuses, and the next free suffix is taken).
import { createUniqueNote, noteLink, normalizeVaultPath, slugify } from "../../core/notes/note-paths";
import type { KryptonCore } from "../../core/krypton";
import type { MessageModel } from "./chat-controller";
import { webUrl } from "./citations";

const NAME_ATTEMPTS = 100;

export function answerNoteContent(question: string, message: MessageModel): string {
  const parts: string[] = [];
  if (question.trim()) parts.push(`> ${question.trim().replace(/\n/g, "\n> ")}`, "");
  parts.push(message.content.trim());
  if (message.sources.length > 0) {
    parts.push("", "## Sources", "");
    for (const s of message.sources) {
      parts.push(s.kind === "note" ? `${s.n}. ${noteLink(s.path, s.title)}` : `${s.n}. ${webSourceLink(s.title, s.url)}`);
    }
  }
  return parts.join("\n") + "\n";
}

/**
 * A web source as a markdown link, only for an http(s) address (the same check as the chat view's links);
 * anything else (a javascript: or file: URL from a search answer or an edited chat file) stays plain text.
 * Parentheses are escaped so they cannot end the link early.
 */
function webSourceLink(title: string, url: string): string {
  const text = title.replace(/[[\]]/g, "");
  const href = webUrl(url);
  return href ? `[${text}](${href.replace(/\(/g, "%28").replace(/\)/g, "%29")})` : `${text} (not a web address: \`${url.replace(/`/g, "")}\`)`;
}

/** Returns the path of the new note. */
export function saveAnswerAsNote(core: KryptonCore, question: string, message: MessageModel): Promise<string> {
  return saveAsNewNote(core, question.trim() || message.content.slice(0, 60) || "answer", answerNoteContent(question, message));
}

/** A new note named after `name` in the new-note folder (next free suffix; never replaces a file). Returns its path. */
export async function saveAsNewNote(core: KryptonCore, name: string, content: string): Promise<string> {
  const vault = core.host.vault;
  const folder = normalizeVaultPath(core.settings().newNoteFolder, vault.configDir, "folder", "write");
  const slug = slugify(name);
  const path = await createUniqueNote(vault, folder, slug, content, NAME_ATTEMPTS);
  if (path === null) throw new Error(`No free file name for ${slug}.md in ${folder || "the vault root"}`);
  return path;
}
