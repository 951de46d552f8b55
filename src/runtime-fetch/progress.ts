import type { Logger } from "../core/log.ts";

/** The phases of a runtime install, in order. */
export const PHASES = ["download", "verify", "extract", "build", "done"] as const;
export type Phase = (typeof PHASES)[number];

const PHASE_TITLE: Record<Phase, string> = {
  download: "download",
  verify: "verify",
  extract: "extract",
  build: "build native modules",
  done: "done",
};

/**
 * Where a long install is: its phase, bytes of a download, or steps of a build (`step` of
 * `steps` when the count is known), and what is being worked on (`item`).
 */
export interface RuntimeProgress {
  phase: Phase;
  /** What the phase works on, said once when it begins ("73.1 MB from github.com", "Node 24"). */
  detail?: string | undefined;
  received?: number | undefined;
  total?: number | undefined;
  step?: number | undefined;
  steps?: number | undefined;
  item?: string | undefined;
}

export interface ProgressSink {
  write(text: string): unknown;
  isTTY?: boolean | undefined;
  columns?: number | undefined;
}

const MB = 1024 * 1024;

function mb(n: number): string {
  return (n / MB).toFixed(1);
}

/** `4 s`, `1 min 05 s`. */
export function elapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}

/** How far the current phase is, as text: bytes, a percentage, steps. */
function amount(p: RuntimeProgress): string {
  const parts: string[] = [];
  if (p.received !== undefined && p.total) {
    const pct = Math.floor((Math.min(p.received, p.total) / p.total) * 100);
    parts.push(`${pct}% (${mb(p.received)} of ${mb(p.total)} MB)`);
  } else if (p.received !== undefined) parts.push(`${mb(p.received)} MB`);
  if (p.step !== undefined) parts.push(p.steps ? `step ${p.step} of ${p.steps}` : `step ${p.step}`);
  if (p.item) parts.push(p.item);
  return parts.join(", ");
}

export interface ProgressDisplay {
  update(p: RuntimeProgress): void;
  /** A logger whose lines do not tear the redrawn line (it is cleared, the line logged, then redrawn). */
  around(log: Logger): Logger;
  /** Stop redrawing and end the line (call once, on success or failure). */
  end(): void;
}

/**
 * A progress display for a person. On a TTY: one line redrawn in place (phase, bytes or steps,
 * elapsed time; at most ~10 redraws a second, and each second for the clock). Otherwise (CI, a log
 * file): plain lines, one when a phase begins, one per 10% of a download, one per build step, and
 * one every 30 s of a phase that shows nothing else, so a log shows the install is alive.
 */
export function createProgress(
  sink: ProgressSink,
  title: string,
  now: () => number = Date.now,
  o: { heartbeatMs?: number } = {},
): ProgressDisplay {
  const start = now();
  const tty = sink.isTTY === true;
  let cur: RuntimeProgress | undefined;
  let phaseStart = start;
  let lastDraw = Number.NEGATIVE_INFINITY;
  let lastPlain = start;
  let lastDecile = -1;
  let lastStep: number | undefined;
  let drawn = false;
  let ended = false;
  const heartbeatMs = o.heartbeatMs ?? 30_000;

  const lineText = (p: RuntimeProgress): string => {
    let what = amount(p);
    if (p.received !== undefined && p.total) {
      const fill = Math.round((Math.min(p.received, p.total) / p.total) * 20);
      what = `[${"#".repeat(fill)}${"-".repeat(20 - fill)}] ${what}`;
    }
    return `${title}: ${PHASE_TITLE[p.phase]}${what ? ` ${what}` : p.detail ? `: ${p.detail}` : ""} · ${elapsed(now() - start)}`;
  };
  const draw = () => {
    if (!cur || ended) return;
    lastDraw = now();
    const width = Math.max(20, (sink.columns || 80) - 1);
    let text = lineText(cur);
    if (text.length > width) text = `${text.slice(0, width - 1)}…`;
    sink.write(`\r${text}\x1b[K`);
    drawn = true;
  };
  const clear = () => {
    if (drawn) sink.write("\r\x1b[K");
    drawn = false;
  };
  const plain = (text: string) => {
    lastPlain = now();
    sink.write(`${text}\n`);
  };
  const timer = tty
    ? setInterval(() => draw(), 1000)
    : setInterval(
        () => {
          if (cur && cur.phase !== "done" && now() - lastPlain >= heartbeatMs)
            plain(`${title}: ${PHASE_TITLE[cur.phase]}: still working (${elapsed(now() - phaseStart)} in this phase)`);
        },
        Math.min(heartbeatMs, 5_000),
      );
  timer.unref?.();

  return {
    update(p) {
      if (ended) return;
      const newPhase = cur?.phase !== p.phase;
      if (newPhase) {
        phaseStart = now();
        lastDecile = -1;
        lastStep = undefined;
      }
      cur = { ...(newPhase ? {} : { detail: cur?.detail }), ...p };
      if (tty) {
        if (newPhase || now() - lastDraw >= 100 || (p.total !== undefined && p.received === p.total)) draw();
        return;
      }
      if (newPhase) {
        const what = p.detail ? `: ${p.detail}` : "";
        plain(
          p.phase === "done"
            ? `${title}: done in ${elapsed(now() - start)}`
            : `${title}: ${PHASE_TITLE[p.phase]}${what} (${elapsed(now() - start)})`,
        );
      }
      if (p.received !== undefined && p.total) {
        const decile = Math.floor((Math.min(p.received, p.total) / p.total) * 10);
        if (decile !== lastDecile) {
          lastDecile = decile;
          plain(`${title}: ${PHASE_TITLE[p.phase]} ${amount(p)}`);
        }
      } else if (p.step !== undefined && p.step !== lastStep) {
        lastStep = p.step;
        plain(`${title}: ${PHASE_TITLE[p.phase]} ${amount(p)} (${elapsed(now() - start)})`);
      }
    },
    around(log) {
      const wrap = (l: Logger): Logger => {
        const keep =
          (f: (m: string, ...a: unknown[]) => void) =>
          (m: string, ...a: unknown[]) => {
            const was = drawn;
            clear();
            f(m, ...a);
            if (was) draw();
          };
        return {
          debug: keep((m, ...a) => l.debug(m, ...a)),
          info: keep((m, ...a) => l.info(m, ...a)),
          warn: keep((m, ...a) => l.warn(m, ...a)),
          error: keep((m, ...a) => l.error(m, ...a)),
          child: (tag) => wrap(l.child(tag)),
        };
      };
      return wrap(log);
    },
    end() {
      if (ended) return;
      clearInterval(timer);
      if (drawn) {
        // The last state stays on screen as a finished line.
        draw();
        sink.write("\n");
      }
      ended = true;
      drawn = false;
    },
  };
}
