import { z } from "zod";
import type { Core } from "../../core/core.ts";
import type { HierarchyNodeT } from "../../editor-wire/contract.ts";
import type { ToolResult } from "../kernel.ts";
import {
  displayPath,
  fromWireRange,
  type PositionInput,
  type RangeInput,
  resolveForEditor,
  SymbolAtInput,
  toWirePos,
} from "./editor.ts";

/** Shared by the call and type hierarchy tools: the depth and size bounds, and the tree as text. */
export const HierarchyBounds = {
  ...SymbolAtInput,
  depth: z.number().int().min(1).max(5).optional().describe("How many levels to expand (default 2, at most 5)."),
  maxNodes: z.number().int().min(1).max(2000).optional().describe("Most items in the whole tree (default 200)."),
};

export interface HierarchyView {
  name: string;
  kind: string;
  detail?: string;
  path: string;
  range: RangeInput;
  fromRanges?: RangeInput[];
  children: HierarchyView[];
}

export function hierarchyView(core: Core, n: HierarchyNodeT): HierarchyView {
  return {
    name: n.name,
    kind: n.kind,
    ...(n.detail ? { detail: n.detail } : {}),
    path: displayPath(core, n.path),
    range: fromWireRange(n.selectionRange),
    ...(n.fromRanges ? { fromRanges: n.fromRanges.map(fromWireRange) } : {}),
    children: n.children.map((c) => hierarchyView(core, c)),
  };
}

/** One line per item, indented by level: `name (Kind) path:line:col`, and where the calls are. */
export function hierarchyText(nodes: readonly HierarchyView[], callsLabel?: string, indent = ""): string {
  return nodes
    .map((n) => {
      const at = `${n.path}:${n.range.start.line}:${n.range.start.column}`;
      const calls =
        callsLabel && n.fromRanges?.length
          ? ` — ${callsLabel} ${n.fromRanges.map((r) => `${r.start.line}:${r.start.column}`).join(", ")}`
          : "";
      const own = `${indent}${n.name} (${n.kind}${n.detail ? `, ${n.detail}` : ""}) ${at}${calls}`;
      return n.children.length ? `${own}\n${hierarchyText(n.children, callsLabel, `${indent}  `)}` : own;
    })
    .join("\n");
}

/** The bridge's request for a hierarchy: the symbol's file and position, the direction, the bounds (defaults 2 and 200). */
export async function hierarchyRequest<D extends string>(
  core: Core,
  args: { path: string; position: PositionInput; depth?: number | undefined; maxNodes?: number | undefined },
  direction: D,
): Promise<{
  path: string;
  position: { line: number; character: number };
  direction: D;
  depth: number;
  maxNodes: number;
}> {
  return {
    path: await resolveForEditor(core, args.path),
    position: toWirePos(args.position),
    direction,
    depth: args.depth ?? 2,
    maxNodes: args.maxNodes ?? 200,
  };
}

/** A hierarchy tool's result: the tree under its heading (and whether it was cut), or `none`. */
export function hierarchyResult(
  core: Core,
  r: { roots: readonly HierarchyNodeT[]; truncated: boolean },
  o: { direction: string; heading: string; none: string; callsLabel?: string },
): ToolResult {
  const roots = r.roots.map((n) => hierarchyView(core, n));
  return {
    text: roots.length
      ? `${o.heading}${r.truncated ? " (cut at maxNodes)" : ""}:\n${hierarchyText(roots, o.callsLabel)}`
      : o.none,
    structured: { direction: o.direction, roots, truncated: r.truncated },
  };
}
