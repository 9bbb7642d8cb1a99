import { clockFromTimers, type Clock } from "../core/ports/clock";

/** Node's timers. `so a pending timer never keeps the CLI alive after its work is done. */
export const nodeClock: Clock = clockFromTimers(Date.now, (fn, ms) => {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
});
