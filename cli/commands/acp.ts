import { defineCommand } from "citty";
import { runtimeArgs, runtimeOptionsFrom } from "../../src/workbench/runtime-flags.ts";
import { commonArgs, reportFatal, setupLogging } from "../common.ts";

export default defineCommand({
  meta: {
    name: "acp",
    description:
      'Agent Client Protocol coding agent over stdio (Zed: "agent_servers": { "ccb": { "command": "ccb", "args": ["--acp"] } }).\n' +
      "Model: the Anthropic Messages API (env ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL),\n" +
      "or the key stored by `ccb acp --login` (what an editor's sign-in runs in a terminal).\n" +
      "Settings: ~/.config/ccb/settings.json (user, $XDG_CONFIG_HOME) and <project>/.ccb/settings.json.\n" +
      "Sessions: $CCB_DATA_DIR or $XDG_DATA_HOME/ccb or ~/.local/share/ccb (sessions/*.jsonl, permissions/*.json).\n" +
      "Live editor: with a workbench for the session's folder, edits return its diagnostics (--workbench starts one).\n" +
      "stdout carries only ACP frames; logs go to stderr (or --log-file).",
  },
  args: {
    login: {
      type: "boolean",
      description:
        "Sign in: ask for an Anthropic API key (input hidden), check it against the API, store it for ccb acp (mode 0600), exit 0.",
    },
    logout: { type: "boolean", description: "Sign out: remove the key stored by --login." },
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
      if (args.login || args.logout) {
        const [{ resolveAgentEnv }, { runLogin, runLogout }] = await Promise.all([
          import("../../src/agent/settings.ts"),
          import("../../src/agent/login.ts"),
        ]);
        const env = resolveAgentEnv();
        const io = { input: process.stdin, output: process.stderr };
        process.exit(args.logout ? runLogout(env, io) : await runLogin(env, io));
      }
      const { startAcpAgent } = await import("../../src/protocols/acp/index.ts");
      await startAcpAgent({
        log,
        workbench: {
          start: args.workbench === true,
          ...runtimeOptionsFrom(args),
        },
      });
      process.exit(0);
    } catch (err) {
      reportFatal(err);
    }
  },
});
