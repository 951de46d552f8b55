import type { ServerContext } from "@modelcontextprotocol/server";
import type { ToolProgress } from "../../tools/kernel.ts";

/** How often a running call that asked for progress hears that it is still running. */
export const PROGRESS_HEARTBEAT_MS = 2_000;

export interface ProgressReporter {
  /** A tool's own progress report (`ctx.progress`). */
  report: (update: ToolProgress) => void;
  stop: () => void;
}

/**
 * `notifications/progress` for a `tools/call` whose caller asked for it (`_meta.progressToken`),
 * in both protocol eras (the SDK relates it to the request: on HTTP it travels on the request's
 * own stream). Besides the tool's own reports, a heartbeat every PROGRESS_HEARTBEAT_MS says the
 * call is still running, so a client that resets its request timeout on progress never gives up
 * on a long wait (a terminal read, a debug wait) that is still working. Undefined when no token.
 */
export function progressReporter(ctx: ServerContext, tool: string): ProgressReporter | undefined {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return undefined;
  const started = Date.now();
  let progress = 0;
  let stopped = false;
  const send = (message: string): void => {
    if (stopped) return;
    progress++;
    void ctx.mcpReq
      .notify({ method: "notifications/progress", params: { progressToken: token, progress, message } })
      .catch(() => {});
  };
  const timer = setInterval(
    () => send(`${tool} still running (${Math.round((Date.now() - started) / 1000)} s)`),
    PROGRESS_HEARTBEAT_MS,
  );
  timer.unref();
  return {
    report: (update) => send(update.message),
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
