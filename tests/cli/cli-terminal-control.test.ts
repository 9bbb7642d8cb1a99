/**
 * Note names, titles, snippets and model answers are text from others (a shared vault, a web clipper, a
 * model that read them): printed raw, their control characters would drive the user's terminal (clear
 * it, set its title, or worse). The CLI shows them as "\uFFFD" instead; --json keeps them, escaped by JSON.
 */
import { useCliTestBed } from "../support/cli-test-bed";
import { runCli } from "./cli-harness";

const ESC = "\x1b";
/** Right-to-left override: "Invoice \u202Egpj.md" shows as "Invoice dm.jpg" (Trojan Source). */
const RLO = "\u202e";
const NOTES: Record<string, string> = {
  [`Invoice ${RLO}gpj.md`]: `# Walrus ${RLO}tusks\u2066 and \u2069 more\n\nWalruses haul out on ice.\n`,
  [`Evil ${ESC}[31mred.md`]: `# ${ESC}]0;PWNED\x07 Quokka care ${ESC}[2J\n\nQuokkas need shade ${ESC}[8mhidden${ESC}[0m and water.\n`,
  "Plain.md": "# Plain\n\nNothing to see.\n",
};

/** Any C0 or C1 control character but newline and tab. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
/** The bidi embeddings, overrides and isolates, which reorder what a line shows. */
const BIDI = /[\u202a-\u202e\u2066-\u2069]/;

describe("control characters from notes and models never reach the terminal", () => {
  const bed = useCliTestBed({ notes: NOTES });

  it("search prints a note's path, title and snippet with their control characters made visible", async () => {
    const r = await runCli(["search", bed.vault.root, "quokka shade", "--no-embeddings"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(CONTROL);
    expect(r.stdout).toContain("\uFFFD]0;PWNED\uFFFD Quokka care \uFFFD[2J");
    expect(r.stdout).toContain("Evil \uFFFD[31mred.md");
  });

  it("search shows bidi overrides and isolates in a path and title as U+FFFD, so nothing displays reversed; --json keeps them", async () => {
    const r = await runCli(["search", bed.vault.root, "walruses", "--no-embeddings"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(BIDI);
    expect(r.stdout).toContain("Invoice \uFFFDgpj.md");
    expect(r.stdout).toContain("Walrus \uFFFDtusks\uFFFD and \uFFFD more");
    const json = await runCli(["search", bed.vault.root, "walruses", "--no-embeddings", "--json"], { env: bed.env });
    expect((JSON.parse(json.stdout) as { path: string }[])[0].path).toBe(`Invoice ${RLO}gpj.md`);
  });

  it("--json keeps the exact path, escaped by JSON", async () => {
    const r = await runCli(["search", bed.vault.root, "quokka shade", "--no-embeddings", "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(CONTROL);
    expect((JSON.parse(r.stdout) as { path: string }[])[0].path).toBe(`Evil ${ESC}[31mred.md`);
  });

  it("a model's streamed answer and the warnings naming notes are made safe too", async () => {
    bed.ollama.script({ route: "chat", tokens: ["Quokkas ", `${ESC}]52;c;Y3VybCBldmls${ESC}\\`, "like shade\r", "[1]"] });
    const r = await runCli(["ask", bed.vault.root, "what do quokkas need?", "--no-agents"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Quokkas \uFFFD]52;c;Y3VybCBldmls\uFFFD\\like shade[1]");
    expect(r.stdout).not.toMatch(CONTROL);
    expect(r.stderr).not.toMatch(CONTROL);
  });
});
