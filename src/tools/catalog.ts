import checkpointDiff from "./checkpoint_diff.ts";
import checkpointList from "./checkpoint_list.ts";
import checkpointRestore from "./checkpoint_restore.ts";
import debugClearBreakpoints from "./debug_clear_breakpoints.ts";
import debugConfigurations from "./debug_configurations.ts";
import debugControl from "./debug_control.ts";
import debugEvaluate from "./debug_evaluate.ts";
import debugJoin from "./debug_join.ts";
import debugOutput from "./debug_output.ts";
import debugSetBreakpoints from "./debug_set_breakpoints.ts";
import debugStack from "./debug_stack.ts";
import debugStart from "./debug_start.ts";
import debugStatus from "./debug_status.ts";
import debugStop from "./debug_stop.ts";
import debugVariables from "./debug_variables.ts";
import debugWait from "./debug_wait.ts";
import diagnosticsGet from "./diagnostics_get.ts";
import editorApplyEdits from "./editor_apply_edits.ts";
import editorOpen from "./editor_open.ts";
import editorSetSelection from "./editor_set_selection.ts";
import editorState from "./editor_state.ts";
import extensionsInstall from "./extensions_install.ts";
import extensionsList from "./extensions_list.ts";
import extensionsUninstall from "./extensions_uninstall.ts";
import fsDelete from "./fs_delete.ts";
import fsList from "./fs_list.ts";
import fsMove from "./fs_move.ts";
import fsRead from "./fs_read.ts";
import fsSearch from "./fs_search.ts";
import fsWrite from "./fs_write.ts";
import gitDiff from "./git_diff.ts";
import gitRun from "./git_run.ts";
import gitStatus from "./git_status.ts";
import type { AnyToolDef } from "./kernel.ts";
import languageCallHierarchy from "./language_call_hierarchy.ts";
import languageDefinition from "./language_definition.ts";
import languageDocumentSymbols from "./language_document_symbols.ts";
import languageHover from "./language_hover.ts";
import languageImplementations from "./language_implementations.ts";
import languageReferences from "./language_references.ts";
import languageSignatureHelp from "./language_signature_help.ts";
import languageTypeDefinition from "./language_type_definition.ts";
import languageTypeHierarchy from "./language_type_hierarchy.ts";
import languageWorkspaceSymbols from "./language_workspace_symbols.ts";
import refactorApplyCodeAction from "./refactor_apply_code_action.ts";
import refactorCodeActions from "./refactor_code_actions.ts";
import refactorFormat from "./refactor_format.ts";
import refactorMove from "./refactor_move.ts";
import refactorRename from "./refactor_rename.ts";
import refactorSourceAction from "./refactor_source_action.ts";
import taskList from "./task_list.ts";
import taskRun from "./task_run.ts";
import taskStop from "./task_stop.ts";
import terminalCreate from "./terminal_create.ts";
import terminalKill from "./terminal_kill.ts";
import terminalList from "./terminal_list.ts";
import terminalRead from "./terminal_read.ts";
import terminalResize from "./terminal_resize.ts";
import terminalWrite from "./terminal_write.ts";
import vscodeExecuteCommand from "./vscode_execute_command.ts";
import vscodeListCommands from "./vscode_list_commands.ts";
import vscodeOpen from "./vscode_open.ts";
import workspaceStatus from "./workspace_status.ts";

/**
 * The one explicit catalog of workspace tools, in the order MCP lists them: `ccb serve` offers them, `ccb acp` its
 * editor and debug tools (beside its own file, shell and planning tools, agent/tools/); the IDE socket
 * has Claude Code's own tools (protocols/ide/tools/). A workspace tool not listed here does not exist.
 */
const CATALOG = [
  vscodeOpen,
  workspaceStatus,
  fsList,
  fsRead,
  fsWrite,
  fsDelete,
  fsMove,
  fsSearch,
  editorOpen,
  editorState,
  editorSetSelection,
  editorApplyEdits,
  diagnosticsGet,
  languageDocumentSymbols,
  languageWorkspaceSymbols,
  languageDefinition,
  languageReferences,
  languageHover,
  // refactor and deeper navigation
  languageImplementations,
  languageTypeDefinition,
  languageSignatureHelp,
  languageCallHierarchy,
  languageTypeHierarchy,
  refactorRename,
  refactorMove,
  refactorCodeActions,
  refactorApplyCodeAction,
  refactorSourceAction,
  refactorFormat,
  vscodeListCommands,
  vscodeExecuteCommand,
  extensionsList,
  extensionsInstall,
  extensionsUninstall,
  terminalCreate,
  terminalList,
  terminalRead,
  terminalWrite,
  terminalResize,
  terminalKill,
  gitStatus,
  gitDiff,
  gitRun,
  // Debug (the workbench's debugger)
  debugConfigurations,
  debugStart,
  debugSetBreakpoints,
  debugClearBreakpoints,
  debugStatus,
  debugJoin,
  debugWait,
  debugStack,
  debugVariables,
  debugEvaluate,
  debugControl,
  debugOutput,
  debugStop,
  // Tasks (tasks.json and detected ones, run in the workbench)
  taskList,
  taskRun,
  taskStop,
  // Checkpoints (every agent's recorded changes, undo by change set)
  checkpointList,
  checkpointDiff,
  checkpointRestore,
] as const satisfies readonly AnyToolDef[];
export const workspaceTools: readonly AnyToolDef[] = CATALOG;
/** Each tool of the catalog with its literal name and its own input (for tables keyed by tool name). */
export type WorkspaceTool = (typeof CATALOG)[number];

/** Tool sets a front end can offer. `editor`: without the files, search, terminal and git tools an agent such as `claude` already has. */
export const TOOL_PROFILES = {
  all: workspaceTools,
  editor: workspaceTools.filter((t) => !/^(fs_|terminal_|git_)/.test(t.name)),
} as const satisfies Record<string, readonly AnyToolDef[]>;
