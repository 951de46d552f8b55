import checkDocumentDirty from "./checkDocumentDirty.ts";
import close_tab from "./close_tab.ts";
import closeAllDiffTabs from "./closeAllDiffTabs.ts";
import executeCode from "./executeCode.ts";
import getCurrentSelection from "./getCurrentSelection.ts";
import getDiagnostics from "./getDiagnostics.ts";
import getLatestSelection from "./getLatestSelection.ts";
import getOpenEditors from "./getOpenEditors.ts";
import getWorkspaceFolders from "./getWorkspaceFolders.ts";
import openDiff from "./openDiff.ts";
import openFile from "./openFile.ts";
import saveDocument from "./saveDocument.ts";
import type { AnyIdeTool } from "./tool.ts";

/** The 12 tools of the Claude Code IDE protocol, in the order the VS Code extension lists them. */
export const IDE_TOOLS: readonly AnyIdeTool[] = [
  openFile,
  openDiff,
  getCurrentSelection,
  getLatestSelection,
  getOpenEditors,
  getWorkspaceFolders,
  getDiagnostics,
  checkDocumentDirty,
  saveDocument,
  close_tab,
  closeAllDiffTabs,
  executeCode,
];
