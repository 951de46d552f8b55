import { defineCommand } from "citty";
import { runtimeArgs, runtimeOptionsFrom } from "../../src/workbench/runtime-flags.ts";
import { commonArgs, reportFatal, setupLogging, workspaceArg, workspaceRoots } from "../common.ts";
import { announceLine } from "../logging.ts";

export default defineCommand({
  meta: {
    name: "ide",
    description:
      "Make the browser workbench the IDE of the Claude Code CLI: starts the workbench and a Claude Code IDE server " +
      "(WebSocket MCP on 127.0.0.1, lock file in ${CLAUDE_CONFIG_DIR:-~/.claude}/ide/<port>.lock), prints the workbench URL.\n" +
      "Examples:\n" +
      "  ccb ide -- claude                 run claude here, connected; everything stops when it exits\n" +
      "  ccb ide --workspace ~/src/app --open\n" +
      "  ccb ide --no-workbench            IDE server only (editor tools say there is no workbench)\n" +
      "  ccb ide --status                  list running ccb IDE servers and shared workbenches (who is attached)",
  },
  args: {
    workspace: { ...workspaceArg, description: `${workspaceArg.description} claude connects when run in or under it.` },
    open: { type: "boolean", description: "Open the workbench URL in the default browser." },
    workbench: {
      type: "boolean",
      default: true,
      description: "Start the workbench (--no-workbench: IDE server only).",
    },
    ...runtimeArgs,
    "mcp-tools": {
      type: "boolean",
      default: true,
      description:
        'With `-- claude`: register ccb\'s editor tools (rename, code actions, format, call hierarchy...) with claude as the MCP server "ccb" (--no-mcp-tools: only the IDE integration).',
    },
    status: {
      type: "boolean",
      description:
        "List ccb's running IDE servers (from lock files with live pids) and the shared workbenches with who is attached, then exit.",
    },
    ...commonArgs,
  },
  async run({ args, rawArgs }) {
    try {
      const dd = rawArgs.indexOf("--");
      const command = dd === -1 ? [] : rawArgs.slice(dd + 1);
      // The command (claude's TUI) owns the terminal: only errors reach it unless asked otherwise.
      const quiet =
        command.length > 0 &&
        !args["log-level"] &&
        !args["log-file"] &&
        !process.env.CCB_LOG_LEVEL &&
        !process.env.CCB_LOG_FILE;
      const { log } = setupLogging(quiet ? { ...args, "log-level": "error" } : args);
      const { runIde, statusLines } = await import("../../src/protocols/ide/index.ts");
      if (args.status) {
        const { shareStatusLines } = await import("../../src/workbench/share/status.ts");
        process.stdout.write(`${[...statusLines(), ...(await shareStatusLines())].join("\n")}\n`);
        process.exit(0);
      }
      const { roots, source } = workspaceRoots(rawArgs);
      const code = await runIde({
        roots,
        rootsSource: source,
        open: Boolean(args.open),
        workbench: args.workbench !== false,
        workbenchOptions: runtimeOptionsFrom(args),
        command,
        mcpTools: args["mcp-tools"] !== false,
        log,
        announce: (line) => process.stdout.write(`${line}\n`),
        progress: args["log-level"] === "silent" ? undefined : (line) => announceLine(line),
      });
      process.exit(code);
    } catch (err) {
      reportFatal(err);
    }
  },
});
