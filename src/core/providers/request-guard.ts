/**
 * One guarded HTTP exchange with a model or web service: a silence timeout (reset on every sign of
 * progress, so it bounds both the wait for the first token and the gaps between tokens), the user's
 * AbortSignal, and a fetch wrapper that SDK clients use so every byte goes through the host.
 */
import type { Clock } from "../ports/clock";
import type { FetchLike } from "../ports/http";
import { ProviderError } from "./provider-error";

export interface RequestGuard {
  /** Aborts on the user's signal or after `timeoutMs` without progress. */
  readonly signal: AbortSignal;
  /** A fetch that carries `signal` (merged with any signal the SDK passes) and notes when headers arrived. */
  readonly fetch: FetchLike;
  readonly timeoutMs: number;
  /** Call on every sign of progress (a token, a chunk): restarts the silence timer. */
  touch(): void;
  timedOut(): boolean;
  /** The caller's own signal aborted (the user pressed Stop). */
  stopped(): boolean;
  /** A response (headers) arrived: failures after this are cut streams, not unreachable servers. */
  responded(): boolean;
  dispose(): void;
  /** dispose() and abort whatever is still open (a stream the caller stopped reading). */
  close(): void;
}

export interface TimeoutSignal {
  /** Aborts on the caller's signal or when the time runs out. */
  readonly signal: AbortSignal;
  /** Starts the time again (a silence timeout: on every sign of progress). */
  readonly restart: () => void;
  readonly timedOut: () => boolean;
  readonly abort: () => void;
  /** Stops the timer and lets go of the caller's signal. */
  readonly dispose: () => void;
}

/**
 * An AbortSignal that fires on the caller's signal or after `timeoutMs`, whichever comes first: a deadline,
 * or with restart() a silence timeout. `timeoutMs` 0 or less sets no time limit.
 */
export function timeoutSignal(clock: Clock, timeoutMs: number, signal?: AbortSignal): TimeoutSignal {
  const controller = new AbortController();
  let timedOut = false;
  let cancelTimer: () => void = () => {};
  const restart = () => {
    cancelTimer();
    if (timeoutMs > 0 && !controller.signal.aborted) {
      cancelTimer = clock.setTimer(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
    }
  };
  const onCallerAbort = () => controller.abort();
  if (signal?.aborted) controller.abort();
  else signal?.addEventListener("abort", onCallerAbort, { once: true });
  restart();
  return {
    signal: controller.signal,
    restart,
    timedOut: () => timedOut,
    abort: () => controller.abort(),
    dispose: () => {
      cancelTimer();
      cancelTimer = () => {};
      signal?.removeEventListener("abort", onCallerAbort);
    },
  };
}

export function createRequestGuard(options: {
  clock: Clock;
  fetch: FetchLike;
  timeoutMs: number;
  signal?: AbortSignal;
}): RequestGuard {
  const { timeoutMs, signal: userSignal } = options;
  const silence = timeoutSignal(options.clock, timeoutMs, userSignal);
  let responded = false;

  const guardedFetch: FetchLike = async (input, init) => {
    // SDKs may pass their own signal (ollama's stream iterator does): abort on either.
    const inner = init?.signal;
    let signal: AbortSignal = silence.signal;
    if (inner && inner !== silence.signal) {
      const merged = new AbortController();
      const abort = () => merged.abort();
      if (inner.aborted || silence.signal.aborted) merged.abort();
      inner.addEventListener("abort", abort, { once: true });
      silence.signal.addEventListener("abort", abort, { once: true });
      signal = merged.signal;
    }
    const response = await options.fetch(input, { ...init, signal });
    responded = true;
    silence.restart();
    return response;
  };

  return {
    signal: silence.signal,
    fetch: guardedFetch,
    timeoutMs,
    touch: silence.restart,
    timedOut: silence.timedOut,
    stopped: () => userSignal?.aborted === true,
    responded: () => responded,
    dispose: silence.dispose,
    close: () => {
      silence.dispose();
      silence.abort();
    },
  };
}

/** What a failed call was talking to, for plain-words messages. */
export interface CallSite {
  /** "Ollama", "Gemini", "Tavily". */
  service: string;
  /** Base URL shown to the user (never contains a key). */
  url: string;
}

/**
 * Turns a transport-level failure (no HTTP status) into a ProviderError: the user's Stop, our silence
 * timeout, a cut stream (after headers), a connection closed before any answer, or an unreachable server.
 */
export function transportError(err: unknown, guard: RequestGuard, site: CallSite): ProviderError {
  if (err instanceof ProviderError) return err;
  if (guard.stopped()) return new ProviderError("aborted", "Stopped");
  if (guard.timedOut()) {
    const seconds = Math.max(1, Math.round(guard.timeoutMs / 1000));
    return guard.responded()
      ? new ProviderError("timeout", `${site.service} stopped sending the answer (no data for ${seconds} s).`)
      : new ProviderError("timeout", `${site.service} did not answer within ${seconds} s at ${site.url}.`);
  }
  if (guard.responded()) {
    // After the headers, a transport failure is the connection closing mid-answer. The fetch's own words
    // ("terminated", "network error", "Failed to fetch") name no cause a person can act on, so they stay out.
    return new ProviderError("bad-response", connectionBrokeMessage(site));
  }
  // Before the headers: either no connection was made (refused, unknown host) or the server took it and
  // closed it without an answer. Only the second has a cause code saying so; the advice differs.
  if (closedAfterConnect(err)) return new ProviderError("server", closedBeforeAnswerMessage(site));
  return new ProviderError("unreachable", `${site.service} is not reachable at ${site.url}: is it running and is the address right?`);
}

/**
 * Codes a fetch failure's cause carries when the connection was made and then closed by the other side
 * (Node's fetch: UND_ERR_SOCKET "other side closed"; ECONNRESET, EPIPE). A refused or unresolved
 * connection (ECONNREFUSED, ENOTFOUND) and a browser's bare "Failed to fetch" have none of them.
 */
const CLOSED_CODES = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"]);

function closedAfterConnect(err: unknown): boolean {
  let cause: unknown = err;
  for (let depth = 0; depth < 5 && typeof cause === "object" && cause !== null; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && CLOSED_CODES.has(code)) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/** The server took the connection and closed it before any answer: it is running, so "is it running?" is wrong. */
function closedBeforeAnswerMessage(site: CallSite): string {
  return (
    `${site.service} at ${site.url} accepted the connection but closed it before sending any answer. ` +
    `Check the server's log (for Ollama, it often ran out of memory loading the model: see \`ollama ps\`), and any proxy, VPN or firewall in between.`
  );
}

/** A response stream that stopped partway, in plain words: what happened and what to do. */
export function connectionBrokeMessage(site: CallSite): string {
  return (
    `The connection to ${site.service} broke off while its answer was arriving, so the answer is incomplete. ` +
    `Try again; if it keeps happening, check the server at ${site.url} (is it still running?) and any proxy or VPN in between, which may close long connections.`
  );
}
