/**
 * The standard set-up of a CLI test file, in one call at the top of a describe block (or of the file): the
 * bundled CLI built once (cli-harness.ts), one loopback Ollama server for all its tests, reset before each,
 * and with `notes` a fresh temp vault per test. It registers the jest hooks; read its fields inside tests.
 *
 *   const bed = useCliTestBed({ notes: NOTES });
 *   it("…", async () => {
 *     bed.ollama.script({ route: "chat", reply: "Hi" });
 *     const r = await runCli(["ask", bed.vault.root, "hello?"], { env: bed.env });
 *   });
 *
 * After each test, every CLI child the harnesses started and that still runs is killed (stopLeftoverChildren):
 * a test that fails partway cannot leave its server or chat behind.
 *
 * A test may make its own vault (`bed.vault = await makeTempVault(…)`: removed after the test) or stop
 * the server and start another (`bed.ollama = await startOllamaServer()`: closed after the file).
 */
import { buildCli, stopLeftoverChildren } from "../cli/cli-harness";
import { startOllamaServer, type OllamaServerOptions, type OllamaTestServer } from "./servers/ollama-server";
import { makeTempVault, type TempVault } from "./temp-vault";

export interface CliTestBedOptions {
  /** The notes of the vault made before each test; without them, tests make their own. */
  notes?: Record<string, string>;
  ollama?: OllamaServerOptions;
}

export interface CliTestBed {
  /** The bundled CLI's private copy (buildCli), for tests that run it their own way. */
  readonly entry: string;
  ollama: OllamaTestServer;
  vault: TempVault;
  /** Points the CLI at `ollama`; everything else in the clean environment points nowhere (cleanEnv). */
  readonly env: Record<string, string>;
}

export function useCliTestBed(options: CliTestBedOptions = {}): CliTestBed {
  let entry: string | undefined;
  let ollama: OllamaTestServer | undefined;
  let vault: TempVault | undefined;
  const bed: CliTestBed = {
    get entry() {
      return ready(entry, "entry");
    },
    get ollama() {
      return ready(ollama, "ollama");
    },
    set ollama(server) {
      ollama = server;
    },
    get vault() {
      return ready(vault, "vault");
    },
    set vault(made) {
      vault = made;
    },
    get env() {
      return { KRYPTON_OLLAMA_URL: bed.ollama.url };
    },
  };

  beforeAll(async () => {
    entry = await buildCli();
    ollama = await startOllamaServer(options.ollama);
  }, 120_000);
  afterAll(async () => {
    await ollama?.close();
  });
  // Before the vault goes: a child left running by a test that failed partway is stopped first.
  afterEach(stopLeftoverChildren);
  beforeEach(async () => {
    ollama?.reset();
    if (options.notes) vault = await makeTempVault(options.notes);
  });
  afterEach(async () => {
    await vault?.cleanup();
    vault = undefined;
  });
  return bed;
}

function ready<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`the CLI test bed has no ${name} here (outside a test, or no vault made for this test)`);
  return value;
}
