import { z } from "zod";
import { ToolError } from "../tools/tool";
import { defineTool, type ToolRegistry } from "../tools/tool-registry";
import { runReport } from "./flow-report";
import type { WorkflowService } from "./workflow-service";

/**
 * `run_workflow`: runs a flow note from the vault on an input. The note is read through the registry's
 * own read_note tool, so the same path, exclusion and symlink rules apply as for every other read.
 */
export function registerWorkflowTool(registry: ToolRegistry, workflows: WorkflowService): void {
  registry.register(
    defineTool({
      name: "run_workflow",
      title: "Run workflow",
      description:
        "Runs a Krypton workflow (a note with a ```krypton-flow block) on an input text and returns the result, " +
        "the status (finished, step limit, time limit, loop guard, failed, stopped) and the path of agents taken.",
      // The flow's own tools wait for the index when they read it; which flow runs is known only per call.
      needsIndex: "through-tools",
      inputSchema: {
        flow_path: z.string().max(1024).describe('The workflow note, vault-relative or absolute inside the vault, e.g. "Workflows/Retry loop.md".'),
        input: z.string().max(100_000).describe("The text the flow starts from."),
      },
      outputSchema: {
        status: z.string(),
        result: z.string(),
        message: z.string(),
        path: z.array(z.string()),
        keywordOnly: z.string().optional().describe("Set when a step's search matched notes by keywords only: why (each distinct reason once, in order)."),
        toolErrors: z.array(z.string()).optional().describe('Tool calls of the steps that failed or were refused ("agent: tool failed: why"); the model may have answered on without them.'),
      },
      annotations: { readOnlyHint: true, openWorldHint: true },
      async run(input, context) {
        const note = await registry.call("read_note", { path: input.flow_path }, context);
        const structuredNote = note.structured as { path: string; content: string };
        // A flow whose task runs that flow again (itself, or through another) would nest runs without end.
        const running = context.workflows ?? [];
        if (running.includes(structuredNote.path)) {
          throw new ToolError(`${structuredNote.path} is already running (${[...running, structuredNote.path].join(" → ")}): a workflow cannot run itself, directly or through another workflow`, "invalid-input");
        }
        const source = workflows.parseSource(structuredNote.content, structuredNote.path);
        if (source.error) throw new ToolError(source.error, "invalid-input");
        const validation = await workflows.validate(source.json, context.signal);
        if (!validation.flow || validation.errors.length > 0) {
          throw new ToolError(`The workflow is not valid:\n${validation.errors.map((e) => `${e.pointer}: ${e.message}`).join("\n")}`, "invalid-input");
        }
        const result = await workflows.run(validation.flow, input.input, { signal: context.signal, running: [...running, structuredNote.path] });
        const structured = runReport(result);
        const path = structured.path.join(" → ");
        const toolErrors = structured.toolErrors ? `\n\nTool errors:\n${structured.toolErrors.map((e) => `- ${e}`).join("\n")}` : "";
        if (result.status === "failed") throw new ToolError(`${result.message} (path: ${path})${toolErrors}`, "failed");
        // Why a run did not finish (a limit) goes with its status; like search_notes, the remark follows the result in the text too.
        const why = result.status === "finished" ? "" : ` ${result.message}`;
        return { structured, text: `${structured.result}\n\n[${result.status}: ${path}]${why}${toolErrors}${structured.keywordOnly ? `\n\n${structured.keywordOnly}` : ""}` };
      },
    }),
  );
}
