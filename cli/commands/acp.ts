import { defineCommand } from "citty";
import { commonArgs, reportFatal, runtimeArgs, runtimeOptions, setupLogging } from "../common.ts";

export default defineCommand({
  meta: {
    name: "acp",
    description:
      'Agent Client Protocol coding agent over stdio (Zed: "agent_servers": { "ccb": { "command": "ccb", "args": ["--acp"] } }).\n' +
      "Model: the Anthropic Messages API (env ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL).\n" +
      "Settings: ~/.config/ccb/settings.json (user, $XDG_CONFIG_HOME) and <project>/.ccb/settings.json.\n" +
      "Sessions: $CCB_DATA_DIR or $XDG_DATA_HOME/ccb or ~/.local/share/ccb (sessions/*.jsonl, permissions/*.json).\n" +
      "Live editor: with a workbench for the session's folder, edits return its diagnostics (--workbench starts one).\n" +
      "stdout carries only ACP frames; logs go to stderr (or --log-file).",
  },
  args: {
    workbench: {
      type: "boolean",
      description:
        "Start a workbench (code-server or OpenVSCode, with headless Chromium) for each session's folder when none is there.",
    },
    ...runtimeArgs,
    ...commonArgs,
  },
  async run({ args }) {
    try {
      const { log } = setupLogging(args);
      const { startAcpAgent } = await import("../../src/protocols/acp/stdio.ts");
      await startAcpAgent({
        log,
        workbench: {
          start: args.workbench === true,
          ...runtimeOptions(args),
        },
      });
      process.exit(0);
    } catch (err) {
      reportFatal(err);
    }
  },
});
