import type { ProgressEvent } from "./fetch.ts";

export interface ProgressSink {
  write(text: string): unknown;
  isTTY?: boolean | undefined;
  columns?: number | undefined;
}

const MB = 1024 * 1024;

function mb(n: number): string {
  return (n / MB).toFixed(1);
}

/**
 * A download progress display: a redrawn bar on a TTY (at most ~10 redraws a second), plain lines
 * every 10% otherwise. `done()` ends the bar's line.
 */
export function createProgress(sink: ProgressSink, label: string, now: () => number = Date.now) {
  const start = now();
  let lastDraw = Number.NEGATIVE_INFINITY;
  let lastDecile = -1;
  let drawn = false;
  return {
    update(p: ProgressEvent): void {
      const frac = p.total > 0 ? Math.min(1, p.received / p.total) : 0;
      const t = now();
      const rate = p.received / Math.max(0.001, (t - start) / 1000);
      if (sink.isTTY) {
        if (t - lastDraw < 100 && p.received < p.total) return;
        lastDraw = t;
        const width = Math.max(10, Math.min(40, (sink.columns ?? 80) - 60));
        const fill = Math.round(frac * width);
        const bar = `${"#".repeat(fill)}${"-".repeat(width - fill)}`;
        sink.write(
          `\r${label} [${bar}] ${(frac * 100).toFixed(0).padStart(3)}% ${mb(p.received)}/${mb(p.total)} MB ${mb(rate)} MB/s\x1b[K`,
        );
        drawn = true;
        return;
      }
      const decile = Math.floor(frac * 10);
      if (decile === lastDecile) return;
      lastDecile = decile;
      sink.write(`${label}: ${decile * 10}% (${mb(p.received)} of ${mb(p.total)} MB)\n`);
    },
    done(): void {
      if (drawn) sink.write("\n");
      drawn = false;
    },
  };
}
