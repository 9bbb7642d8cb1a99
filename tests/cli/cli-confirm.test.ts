/**
 * The write confirmation of `krypton ask/flow run` on a terminal: Ctrl+C at its prompt (a key in raw mode,
 * not a signal) stops the run as Ctrl+C does anywhere else, and allows nothing.
 */
import * as readline from "node:readline";
import { PassThrough } from "node:stream";
import { cliConfirm } from "../../src/cli/commands/agent-cli";
import { createInterrupts, type CommandContext } from "../../src/cli/command";
import { createOutput } from "../../src/cli/output";

const sink = () => ({ text: "", write(t: string) { this.text += t; }, isTTY: false });
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

it("Ctrl+C at the prompt fires the command's interrupt (the run stops) and the write is denied", async () => {
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  const stdout = Object.assign(new PassThrough(), { isTTY: true });
  stdout.resume();
  const controller = new AbortController();
  const interrupts = createInterrupts(() => undefined);
  interrupts.push(() => controller.abort());
  const ctx: CommandContext = { env: {}, cwd: process.cwd(), output: createOutput(sink(), sink()), stdin, stdout, interrupts };
  const confirm = cliConfirm(ctx, { yes: false })!;
  const decision = confirm({ tool: "append_to_note", arguments: {}, title: "Append 1 line to Plan.md", preview: "+- x" }, controller.signal);
  await turns(3);
  stdin.write("\x03");
  await turns(3);
  expect(controller.signal.aborted).toBe(true);
  await expect(decision).resolves.toBe("deny");
});

it("a run stopped while its prompt waits takes the question back: krypton chat's prompt returns and gets the next line", async () => {
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  const stdout = Object.assign(new PassThrough(), { isTTY: true });
  stdout.resume();
  const rl = readline.createInterface({ input: stdin, output: stdout, terminal: true, prompt: "you › " });
  const lines: string[] = [];
  rl.on("line", (line) => lines.push(line));
  const controller = new AbortController();
  const ctx: CommandContext = { env: {}, cwd: process.cwd(), output: createOutput(sink(), sink()), stdin, stdout, interrupts: createInterrupts(() => undefined) };
  const decision = cliConfirm(ctx, { yes: false, rl })!({ tool: "append_to_note", arguments: {}, title: "Append 1 line to Plan.md", preview: "+- x" }, controller.signal);
  await turns(3);
  controller.abort();
  await expect(decision).resolves.toBe("deny");
  expect(rl.getPrompt()).toBe("you › ");
  stdin.write("/config\r");
  await turns(3);
  expect(lines).toEqual(["/config"]);
  rl.close();
});
