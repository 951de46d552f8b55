import { createHash } from "node:crypto";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { Core } from "../core/core.ts";
import { CcbError, isCcbError } from "../core/errors.ts";
import type { PlannedFile } from "../editor-wire/contract.ts";
import { defineTool, type ToolContext } from "./kernel.ts";
import { callBridge, displayPath, languageReady } from "./shared/editor.ts";
import { changedView, changesText, confinePlan, diffsText, REFACTOR_WRITE, SaveInput } from "./shared/refactor.ts";

/**
 * Move or rename a file or folder with every import updated, through the editor: its TypeScript
 * server computes the edits before anything moves (a preview is exactly what an apply does), and the
 * bridge applies edits and move as one, all or none. A tool of its own beside refactor_rename (same
 * preview → previewId → apply shape) rather than a mode of fs_move: fs_move is a file tool that works
 * without an editor (and `claude` through `ccb ide` is not offered the fs_ tools at all); this one
 * needs the editor and says so.
 */

const MAX_LISTED = 200;
const SCRIPT = /\.(?:[cm]?[jt]sx?)$/;

/** The id of a move plan: both ends, and each file's path, text hash and edits. Any change, another id. */
function planId(from: string, to: string, files: readonly PlannedFile[]): string {
  const h = createHash("sha256").update(`${from}\0${to}`);
  for (const f of files) h.update(`\0${f.path}\0${f.hash}\0${JSON.stringify(f.edits)}`);
  return h.digest("hex").slice(0, 16);
}

/** A script file inside a folder (breadth first, links not followed, bounded): its project is the one to load. */
async function scriptIn(dir: string): Promise<string | undefined> {
  const queue = [dir];
  for (let seen = 0; queue.length && seen < 2_000; ) {
    const d = queue.shift() as string;
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    seen += entries.length;
    for (const e of entries) if (e.isFile() && SCRIPT.test(e.name)) return join(d, e.name);
    for (const e of entries)
      if (e.isDirectory() && e.name !== "node_modules" && e.name !== ".git") queue.push(join(d, e.name));
  }
  return undefined;
}

/** Both ends confined; `from` an existing file or folder (not a link, not a root), `to` free and not inside it. */
async function ends(core: Core, fromIn: string, toIn: string) {
  try {
    core.bridge.require();
  } catch (err) {
    if (isCcbError(err, "BRIDGE_UNAVAILABLE"))
      throw new CcbError("BRIDGE_UNAVAILABLE", err.message, {
        hint:
          "refactor_move needs the editor (its TypeScript server computes the import edits). A plain move " +
          "(fs_move where it is offered, or mv in a shell) moves the file but updates no import: fix the importers by hand then.",
      });
    throw err;
  }
  const from = await core.workspace.resolve(fromIn, { mustExist: true, followFinal: false });
  const to = await core.workspace.resolve(toIn, { followFinal: false });
  if (from.rel === "" || from.rel === ".")
    throw new CcbError("INVALID_ARGUMENT", "A workspace root cannot be moved.", {
      hint: "Move a file or folder inside it.",
    });
  const st = await lstat(from.abs);
  if (st.isSymbolicLink())
    throw new CcbError("INVALID_ARGUMENT", `${fromIn} is a symbolic link; refactor_move moves files and folders.`, {
      hint: "Move the link itself with a plain move.",
    });
  if (to.exists)
    throw new CcbError("ALREADY_EXISTS", `${toIn} already exists; nothing was moved.`, {
      hint: "Choose a destination that does not exist.",
    });
  if (to.abs.startsWith(`${from.abs}/`))
    throw new CcbError("INVALID_ARGUMENT", "A folder cannot be moved into itself.", {
      hint: "Choose a destination outside it.",
    });
  return { from: from.abs, to: to.abs, folder: st.isDirectory() };
}

async function planMove(ctx: ToolContext, from: string, to: string, folder: boolean) {
  const probe = folder ? await scriptIn(from) : from;
  if (probe) await languageReady(ctx, probe);
  const r = await callBridge(ctx, "refactor.move", { from, to });
  await confinePlan(ctx.core, r.files);
  return r;
}

function fileList(core: Core, from: string, to: string, folder: boolean, files: readonly PlannedFile[]): string {
  const lines = [
    `  R ${displayPath(core, from)}${folder ? "/" : ""} -> ${displayPath(core, to)}${folder ? "/" : ""} (moved)`,
  ];
  for (const f of files.slice(0, MAX_LISTED)) {
    const inside = f.path === from || f.path.startsWith(`${from}/`);
    lines.push(`  M ${displayPath(core, f.path)} (${f.edits.length} edit(s)${inside ? ", moves with it" : ""})`);
  }
  if (files.length > MAX_LISTED) lines.push(`  ... and ${files.length - MAX_LISTED} more file(s)`);
  return lines.join("\n");
}

export default defineTool({
  name: "refactor_move",
  title: "Move a file or folder, updating imports",
  description:
    "Move or rename a workspace file or folder and update every import of it (and the moved files' own relative imports), " +
    "with the editor's TypeScript language service: the edits TypeScript makes when a file is moved in the editor. " +
    "Without `apply` it only previews: the files the move touches (the moved one listed first), a unified diff per file and a previewId; nothing is written. " +
    "With apply=true the edits and the move happen together, all or none; give the previewId to refuse (VERSION_CONFLICT) when any file changed since that preview. " +
    "One call replaces a plain move plus a read and a write per importer. Needs the editor bridge (without it, a plain move updates no import).",
  input: z.object({
    from: z.string().min(1).describe("File or folder to move (relative to the workspace root, or absolute inside it)."),
    to: z.string().min(1).describe("New path; must not exist (missing parent folders are created)."),
    apply: z.boolean().optional().describe("Move and update the imports (default false: preview only)."),
    previewId: z
      .string()
      .optional()
      .describe("With apply: the previewId of the preview you checked; the move is refused if anything changed since."),
    save: SaveInput,
  }),
  annotations: REFACTOR_WRITE,
  needsBridge: true,
  async execute(args, ctx) {
    const { from, to, folder } = await ends(ctx.core, args.from, args.to);
    const r = await planMove(ctx, from, to, folder);
    const id = planId(from, to, r.files);
    const edits = r.files.reduce((n, f) => n + f.edits.length, 0);
    const moved = {
      from: displayPath(ctx.core, from),
      to: displayPath(ctx.core, to),
      kind: folder ? "folder" : "file",
    };
    const files = r.files.map((f) => ({ path: displayPath(ctx.core, f.path), edits: f.edits.length }));
    const noService = r.languageService
      ? ""
      : "No TypeScript language service answered: the move updates no import (a plain move).\n";
    if (!args.apply) {
      const diff = diffsText(ctx.core, r.files);
      return {
        text:
          `Move ${moved.from} to ${moved.to}: ${edits} edit(s) in ${files.length} file(s), not applied. previewId: ${id}\n` +
          noService +
          `Apply with apply=true and previewId="${id}".\nFiles the move touches:\n` +
          `${fileList(ctx.core, from, to, folder, r.files)}\n${diff}`,
        structured: { applied: false, previewId: id, moved, edits, files, languageService: r.languageService, diff },
      };
    }
    if (args.previewId !== undefined && args.previewId !== id)
      throw new CcbError("VERSION_CONFLICT", "The files changed since that preview; nothing was moved.", {
        hint: "Preview the move again, check the new diff, and apply with its previewId.",
      });
    const applied = await callBridge(ctx, "files.move", {
      from,
      to,
      files: r.files.map((f) => ({ path: f.path, hash: f.hash, edits: f.edits })),
      save: args.save ?? true,
    });
    return {
      text: applied.files.length
        ? `${noService}${changesText(ctx.core, `Moved ${moved.from} to ${moved.to} (${edits} import edit(s))`, applied.files)}`
        : `${noService}Moved ${moved.from} to ${moved.to}; no import needed a change.`,
      structured: {
        applied: true,
        previewId: id,
        moved,
        edits,
        languageService: r.languageService,
        files: applied.files.map((f) => changedView(ctx.core, f)),
      },
    };
  },
});
