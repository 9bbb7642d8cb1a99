import { clockFromTimers, type Clock } from "../core/ports/clock";

/** Node's timers, for the CLI, the standalone MCP server and tests. */
export const nodeClock: Clock = clockFromTimers(Date.now, (fn, ms) => {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
});
