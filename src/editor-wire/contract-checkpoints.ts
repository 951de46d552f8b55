/**
 * The checkpoints block of the bridge contract (merged into `serverMethods` of editor-wire/contract.ts):
 * what the bridge extension's "Agent changes" view asks ccb for. Direction ext -> ccb, as the
 * terminal panel's requests: the person's tab asks, the ccb process that runs the workbench answers
 * from the workspace's checkpoint store (src/core/checkpoints/, shared by every ccb process of the
 * workspace) and from who is attached to it (src/workbench/checkpoints-view.ts).
 *
 * ccb -> ext: the event `checkpointsChanged` (contract.ts's BridgeEvent) tells every tab that a
 * checkpoint was recorded or who is attached changed; the view then asks `checkpoints.overview` again.
 *
 * Conventions: `path` is absolute (the extension opens it), `rel` is the path as the workspace shows
 * it; a checkpoint id is 7 to 40 hex digits; times are ISO 8601.
 */
import { z } from "zod";

const Id = z.string().regex(/^[0-9a-f]{7,40}$/, "a checkpoint id: 7 to 40 hex digits");

/**
 * Someone at the workbench now: the ccb process that runs it, a front end attached to it, a client
 * connected to either (an MCP session by its clientInfo name, an IDE client, an ACP session), a
 * workbench tab.
 */
export const PresenceEntry = z.object({
  kind: z.enum(["runs", "attached", "client", "tab"]),
  label: z.string(),
  detail: z.string(),
});
export type PresenceEntry = z.infer<typeof PresenceEntry>;

/** One change set: the files one checkpoint recorded, and who made it. */
export const ChangeSet = z.object({
  id: z.string(),
  time: z.string(),
  /** "mcp" | "ide" | "acp" | "person" */
  frontEnd: z.string(),
  /** The client's name (MCP clientInfo, the IDE client, the ACP client; "outside ccb" for the person's own edits). */
  client: z.string(),
  session: z.string().optional(),
  /** The person a call came from, when it carried an OAuth identity. */
  identity: z.string().optional(),
  tool: z.string(),
  call: z.string(),
  /** before (changes nobody made through ccb), after (the call's), effects (of a command that ran on), restore. */
  phase: z.string(),
  undoOf: z.array(z.string()).optional(),
  files: z.array(z.object({ path: z.string(), rel: z.string() })),
});
export type ChangeSet = z.infer<typeof ChangeSet>;

/** One file of a change set, before and after it (null: absent on that side). */
export const ChangeSetFile = z.object({
  path: z.string(),
  rel: z.string(),
  before: z.string().nullable(),
  after: z.string().nullable(),
});
export type ChangeSetFile = z.infer<typeof ChangeSetFile>;

export const checkpointMethods = {
  /** Who is at the workbench now, and the newest change sets (newest first). */
  "checkpoints.overview": {
    params: z.object({ limit: z.number().int().min(1).max(500).optional() }),
    result: z.object({ attached: z.array(PresenceEntry), changes: z.array(ChangeSet) }),
    timeoutMs: 60_000,
  },
  /** The files of one change set, before and after it (what the diff editor shows). */
  "checkpoints.files": {
    params: z.object({ id: Id }),
    result: z.object({ changeSet: ChangeSet, files: z.array(ChangeSetFile) }),
    timeoutMs: 60_000,
  },
  /**
   * After the person confirmed in their tab: `undo` takes back this change set's changes and keeps
   * everyone else's; `restore` sets every recorded file back to its state at this checkpoint. A change
   * made since on the same lines refuses the undo (VERSION_CONFLICT naming the hunks; nothing written).
   * Either way the result is itself a checkpoint (`recorded`), which can be undone in turn.
   */
  "checkpoints.undo": {
    params: z.object({ id: Id, mode: z.enum(["undo", "restore"]) }),
    result: z.object({ files: z.array(z.string()), recorded: z.array(z.string()) }),
    timeoutMs: 120_000,
  },
} as const;

export type CheckpointMethod = keyof typeof checkpointMethods;

export function isCheckpointMethod(m: string): m is CheckpointMethod {
  return Object.hasOwn(checkpointMethods, m);
}
