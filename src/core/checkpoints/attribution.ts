/**
 * Who made a change: the front end, the client's name and session, the tool and call. Carried in a
 * tool call's context (`ToolContext.caller`), written into each checkpoint's commit message as
 * trailers, read back when listing. Every value comes from a peer (an MCP `clientInfo`, an ACP
 * session id), so it is cut to one short line of printable characters before it is stored.
 */

export type FrontEnd = "mcp" | "ide" | "acp" | "person";
const FRONT_ENDS: readonly FrontEnd[] = ["mcp", "ide", "acp", "person"];

/** The caller of a tool call, as its front end knows it. */
export interface Caller {
  frontEnd: FrontEnd;
  /** The client's name (MCP clientInfo.name, the IDE client, the ACP client). */
  client: string;
  /** The client's session (MCP session, IDE connection, ACP session id). */
  session?: string;
  /** The person the call came from, when it carried an OAuth identity (`sub=… client=…`). */
  identity?: string;
}

/** What a checkpoint records: before (someone else's changes since the last record), after (this call's), effects (of a command that ran on), restore. */
export type Phase = "before" | "after" | "effects" | "restore" | "base";
const PHASES: readonly Phase[] = ["before", "after", "effects", "restore", "base"];

export interface Attribution extends Caller {
  tool: string;
  /** One tool call's id: its before/after/effects records share it. */
  call: string;
  phase: Phase;
  /** For a restore: the checkpoints it took back, or the one it went back to. */
  undoOf?: string[];
}

/** Changes nobody made through ccb: the person in an editor, another program. */
export const OUTSIDE: Caller = { frontEnd: "person", client: "outside ccb" };

const MAX_VALUE = 120;

/** One short line of printable characters. */
export function cleanValue(v: string): string {
  const line = v.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ").trim();
  return line.length > MAX_VALUE ? line.slice(0, MAX_VALUE) : line || "(unnamed)";
}

/** The commit message of a checkpoint. */
export function formatMessage(a: Attribution, time: Date): string {
  const who = `${a.frontEnd}:${cleanValue(a.client)}`;
  const lines = [
    `${a.phase} ${cleanValue(a.tool)} by ${who}`,
    "",
    `Ccb-Front-End: ${a.frontEnd}`,
    `Ccb-Client: ${cleanValue(a.client)}`,
    ...(a.session ? [`Ccb-Session: ${cleanValue(a.session)}`] : []),
    ...(a.identity ? [`Ccb-Identity: ${cleanValue(a.identity)}`] : []),
    `Ccb-Tool: ${cleanValue(a.tool)}`,
    `Ccb-Call: ${cleanValue(a.call)}`,
    `Ccb-Phase: ${a.phase}`,
    `Ccb-Time: ${time.toISOString()}`,
    ...(a.undoOf?.length ? [`Ccb-Undo-Of: ${a.undoOf.map(cleanValue).join(" ")}`] : []),
  ];
  return `${lines.join("\n")}\n`;
}

/** The attribution and time a message carries (unknown values fall back to "outside ccb"). */
export function parseMessage(message: string): Attribution & { time: string } {
  const t = new Map<string, string>();
  for (const line of message.split("\n")) {
    const m = /^(Ccb-[A-Za-z-]+): (.*)$/.exec(line);
    if (m?.[1] && m[2] !== undefined && !t.has(m[1])) t.set(m[1], m[2]);
  }
  const fe = t.get("Ccb-Front-End") as FrontEnd | undefined;
  const phase = t.get("Ccb-Phase") as Phase | undefined;
  const session = t.get("Ccb-Session");
  const identity = t.get("Ccb-Identity");
  const undo = t.get("Ccb-Undo-Of");
  return {
    frontEnd: fe && FRONT_ENDS.includes(fe) ? fe : "person",
    client: t.get("Ccb-Client") ?? OUTSIDE.client,
    ...(session ? { session } : {}),
    ...(identity ? { identity } : {}),
    tool: t.get("Ccb-Tool") ?? "",
    call: t.get("Ccb-Call") ?? "",
    phase: phase && PHASES.includes(phase) ? phase : "before",
    ...(undo ? { undoOf: undo.split(" ").filter(Boolean) } : {}),
    time: t.get("Ccb-Time") ?? "",
  };
}
