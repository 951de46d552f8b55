import { randomBytes } from "node:crypto";
import { basename } from "node:path";
import type { ToolCallContent } from "@agentclientprotocol/sdk/unstable";
import type { Core } from "../core/core.ts";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { diffContent } from "./converters.ts";
import type { ClientIO } from "./tools/io.ts";
import { type ToolOutcome, truncateForModel } from "./tools/types.ts";

/** What the person decided in the workbench's diff of a pending edit. */
export type ReviewOutcome =
  /** Accepted, whole or per hunk: the text they kept (their own edits in the diff included). */
  | { kind: "accepted"; text: string }
  | { kind: "rejected" }
  /** Closed by ccb, or the workbench went away: no answer from there. */
  | { kind: "closed" };

export interface DiffReview {
  /** The file the diff is of, with the texts it was opened with. */
  path: string;
  oldText: string | null;
  newText: string;
  outcome: Promise<ReviewOutcome>;
  /** Close the diff in the workbench (the client answered first, or the call ended); settles when the workbench answered (at most 15 s). */
  close(): Promise<void>;
}

/**
 * The workbench's review of a pending edit, beside the ACP client's permission request: when the
 * session's workbench bridge is connected and the call shows exactly one diff, the diff opens in the
 * workbench (as a Claude IDE diff does), where the person accepts or rejects it whole or hunk by
 * hunk. Whichever answers first — the client or the workbench — decides the call. Undefined when
 * there is nothing to open.
 */
export function openDiffReview(
  core: Core,
  content: readonly ToolCallContent[],
  log: Logger,
  signal: AbortSignal,
): DiffReview | undefined {
  const diffs = content.filter((c) => c.type === "diff");
  const diff = diffs.length === 1 ? diffs[0] : undefined;
  if (!diff || !core.bridge.status().connected) return undefined;
  const id = `ccb-acp-diff-${randomBytes(6).toString("hex")}`;
  const stop = new AbortController();
  const both = AbortSignal.any([signal, stop.signal]);
  const outcome = core.bridge
    .call(
      "diff.open",
      {
        id,
        path: diff.path,
        originalText: diff.oldText ?? "",
        proposedText: diff.newText,
        title: `${basename(diff.path)} (proposed by ccb)`,
      },
      { signal: both },
    )
    .then(
      (r): ReviewOutcome =>
        r.outcome === "accepted"
          ? { kind: "accepted", text: r.finalText ?? diff.newText }
          : r.outcome === "rejected"
            ? { kind: "rejected" }
            : { kind: "closed" },
      (err: Error): ReviewOutcome => {
        if (!both.aborted) log.debug(`workbench diff of ${diff.path}: ${err.message}`);
        return { kind: "closed" };
      },
    );
  let closed = false;
  return {
    path: diff.path,
    oldText: diff.oldText ?? null,
    newText: diff.newText,
    outcome,
    async close() {
      if (closed) return;
      closed = true;
      stop.abort();
      if (!core.bridge.status().connected) return;
      await core.bridge.call("diff.close", { id }, { signal: AbortSignal.timeout(15_000) }).then(
        () => undefined,
        (err: Error) => log.debug(`closing workbench diff ${id}: ${err.message}`),
      );
    },
  };
}

/**
 * Write what the person kept when it is not the proposal (some hunks rejected, or their own edits):
 * refused, writing nothing, when the file changed since the diff was made. The model reads the
 * text that was written.
 */
export async function applyReviewed(
  review: DiffReview,
  text: string,
  io: ClientIO,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const now = await io.readText(review.path, signal);
  if (now !== review.oldText)
    throw new CcbError(
      "VERSION_CONFLICT",
      `${review.path} changed while the change was under review; nothing was written.`,
      {
        hint: "Read the file again and propose the change anew.",
      },
    );
  await io.writeText(review.path, text, signal);
  return {
    text: truncateForModel(
      `The user reviewed this change in the editor and kept only part of it (or changed it): ${review.path} was written with the text below, not with your proposal. Read it before changing it again.\n${text}`,
    ),
    content: [diffContent(review.path, review.oldText, text)],
    locations: [{ path: review.path }],
  };
}
