import { clockFromTimers, type Clock } from "../../core/ports/clock";

type TimerWindow = Pick<Window, "setTimeout" | "clearTimeout">;

/** The core's Clock on the window's timers (Obsidian's guidelines: window timers, popout-safe). */
export function createObsidianClock(win: TimerWindow = window): Clock {
  return clockFromTimers(
    () => Date.now(),
    (fn, ms) => {
      const id = win.setTimeout(fn, ms);
      return () => win.clearTimeout(id);
    },
  );
}
