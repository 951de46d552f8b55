import type * as ts from "typescript";
import { flushCompileCacheSoon } from "./compile-cache.ts";

/**
 * A TypeScript server plugin the bridge extension contributes (package.json `typescriptServerPlugins`;
 * scripts/build-extension.mjs puts it in the extension's node_modules). It adds one read-only request
 * to the editor's own TypeScript server: `_ccb.editsForFileRename` {oldFilePath, newFilePath} answers
 * the import edits a move would need (`getEditsForFileRename` of every open project: the same answer
 * the TypeScript extension applies after a move in the explorer), without moving anything. The
 * TypeScript extension's `typescript.tsserverRequest` command forwards requests whose name starts
 * with `_`, so the bridge can preview a move and then apply exactly that preview.
 */

// Built on its own (nothing imports this file: its module.exports would replace the extension's);
// move.ts names the request and reads the answer's shape.
const EDITS_FOR_FILE_RENAME = "_ccb.editsForFileRename";

/** One file's edits as offsets in the text the server holds (the bridge converts them with the document). */
interface FileSpanEdits {
  fileName: string;
  textChanges: Array<{ start: number; length: number; newText: string }>;
}

const projects = new Set<ts.server.Project>();
const sessions = new WeakSet<object>();

function editsForFileRename(oldFilePath: string, newFilePath: string): FileSpanEdits[] {
  const seen = new Set<string>();
  const out: FileSpanEdits[] = [];
  for (const project of projects) {
    if (project.isClosed()) {
      projects.delete(project);
      continue;
    }
    const service = project.projectService;
    const changes = project
      .getLanguageService()
      .getEditsForFileRename(
        oldFilePath,
        newFilePath,
        service.getHostFormatCodeOptions(),
        service.getHostPreferences(),
      );
    for (const c of changes) {
      if (seen.has(c.fileName)) continue;
      seen.add(c.fileName);
      out.push({
        fileName: c.fileName,
        textChanges: c.textChanges.map((t) => ({ start: t.span.start, length: t.span.length, newText: t.newText })),
      });
    }
  }
  return out;
}

function init(): ts.server.PluginModule {
  flushCompileCacheSoon(); // this tsserver's compile cache (it enables the cache itself)
  return {
    create(info) {
      projects.add(info.project);
      const session = info.session;
      if (session && !sessions.has(session)) {
        sessions.add(session);
        session.addProtocolHandler(EDITS_FOR_FILE_RENAME, (request) => {
          const args = (request.arguments ?? {}) as { oldFilePath?: unknown; newFilePath?: unknown };
          if (typeof args.oldFilePath !== "string" || typeof args.newFilePath !== "string")
            throw new Error("oldFilePath and newFilePath must be strings");
          return { response: editsForFileRename(args.oldFilePath, args.newFilePath), responseRequired: true };
        });
      }
      return info.languageService;
    },
  };
}

module.exports = init;
