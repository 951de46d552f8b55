import { defineCommand, runCommand } from "citty";
import { CCB_VERSION } from "../src/core/version.ts";
import { checkFlags, renderHelp, resolveCommand, UsageError } from "./argv.ts";

/**
 * The `ccb` root command. Subcommands load lazily, so `ccb link` never loads PTYs, Chromium
 * clients or the workbench.
 */
export const main = defineCommand({
  meta: {
    name: "ccb",
    version: CCB_VERSION,
    description:
      "A bridge between AI coding agents and a real editor.\n\n" +
      "Commands:\n" +
      "  serve    MCP server (stdio / Streamable HTTP) over a shared workspace and a Code OSS workbench\n" +
      "  ide      make the workbench an IDE for the Claude Code CLI (then run `claude`)\n" +
      "  acp      Agent Client Protocol coding agent over stdio, for Zed (also `ccb --acp`)\n" +
      "  link     expose a stdio ACP agent over an authenticated WebSocket\n" +
      "  stream   headless Chromium screencast of the workbench over WebSocket\n" +
      "  runtime  fetch and inspect the pinned OpenVSCode Server runtime\n" +
      "  workbench  the workbench shared by the front ends (`ccb workbench status`)",
  },
  subCommands: {
    serve: () => import("./commands/serve.ts").then((m) => m.default),
    ide: () => import("./commands/ide.ts").then((m) => m.default),
    acp: () => import("./commands/acp.ts").then((m) => m.default),
    link: () => import("./commands/link.ts").then((m) => m.default),
    stream: () => import("./commands/stream.ts").then((m) => m.default),
    runtime: () => import("./commands/runtime.ts").then((m) => m.default),
    workbench: () => import("./commands/workbench.ts").then((m) => m.default),
  },
});

/**
 * Zed starts agents as `ccb --acp`: route that to the `acp` subcommand. A client that runs the
 * terminal sign-in with its args in place of the agent's (`ccb --login`) reaches `acp --login` too.
 */
export function normaliseArgv(argv: string[]): string[] {
  if (argv.length === 1 && (argv[0] === "--login" || argv[0] === "--logout")) return ["acp", argv[0]];
  const i = argv.indexOf("--acp");
  if (i !== -1 && !argv.slice(0, i).some((a) => !a.startsWith("-"))) {
    return ["acp", ...argv.slice(0, i), ...argv.slice(i + 1)];
  }
  return argv;
}

const argv = normaliseArgv(process.argv.slice(2));
try {
  const resolved = await resolveCommand(main, argv);
  const isRoot = resolved.path.length === 0;
  // --help and --version load nothing but the command definitions and the argument parser, and
  // start nothing. console.log: it ignores a reader that left, and under Bun it avoids setting up
  // process.stdout's stream classes, the larger part of this answer's cost.
  if (
    resolved.own.includes("--help") ||
    resolved.own.includes("-h") ||
    (!resolved.cmd.run && resolved.own.length === 0 && !argv.includes("--"))
  ) {
    console.log((await renderHelp(resolved, CCB_VERSION)).replace(/\n$/, ""));
    process.exit(0);
  }
  if (isRoot && (resolved.own.includes("--version") || resolved.own.includes("-v"))) {
    console.log(CCB_VERSION);
    process.exit(0);
  }
  await checkFlags(resolved, isRoot);
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(2);
}

// Before the command runs: secrets move out of process.env into the vault (no child inherits them),
// and the supervisor starts, so every process ccb starts from here on is contained.
const [{ takeSecrets }, { startSupervisor }] = await Promise.all([
  import("../src/core/secret-vault.ts"),
  import("../src/platform/supervisor.ts"),
]);
try {
  takeSecrets();
} catch (err) {
  process.stderr.write(`ccb: ${(err as Error).message}\n`);
  process.exit(1);
}
startSupervisor();
// The reader of stdout left (`ccb serve ... | head`): end as on SIGTERM, cleanly, instead of
// crashing on an unhandled EPIPE.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE" || err.code === "ECONNRESET" || err.code === "ERR_STREAM_DESTROYED")
    process.kill(process.pid, "SIGTERM");
});

// ccb's own flags are checked; flags after `--` belong to the child command (`ccb ide -- claude --help`).
try {
  await runCommand(main, { rawArgs: argv });
} catch (err) {
  process.stderr.write(`ccb: ${(err as Error).message}\nRun \`ccb --help\` for usage.\n`);
  process.exit(1);
}
