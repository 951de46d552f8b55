import { defineCommand } from "citty";
import { CcbError } from "../../src/core/errors.ts";
import { runtimeArgs, runtimeOptionsFrom, workbenchRuntime } from "../../src/workbench/runtime-flags.ts";
import { commonArgs, reportFatal, setupLogging, workspaceArg, workspaceRoots } from "../common.ts";

// the host is the shared workbench: it takes every runtime flag but --share
const { share: _share, ...hostRuntimeArgs } = runtimeArgs;

const status = defineCommand({
  meta: {
    name: "status",
    description: "List the shared workbenches and the ccb front ends attached to each (front end, pid).",
  },
  async run() {
    try {
      const { shareStatusLines } = await import("../../src/workbench/share/status.ts");
      process.stdout.write(`${(await shareStatusLines()).join("\n")}\n`);
      process.exit(0);
    } catch (err) {
      reportFatal(err);
    }
  },
});

const link = defineCommand({
  meta: {
    name: "link",
    description:
      "Print a fresh one-time browser link to the shared workbench of the workspace folders (after a " +
      "takeover the workbench runs behind another front end's gateway and older links are dead).",
  },
  args: {
    workspace: workspaceArg,
  },
  async run({ rawArgs }) {
    try {
      const { shareLink } = await import("../../src/workbench/share/status.ts");
      process.stdout.write(`${await shareLink(workspaceRoots(rawArgs).roots)}\n`);
      process.exit(0);
    } catch (err) {
      reportFatal(err);
    }
  },
});

const FRONT_ENDS = ["ide", "serve", "acp"] as const;

const host = defineCommand({
  meta: {
    name: "host",
    description:
      "Run the shared workbench of the workspace folders in a process of its own, which the front ends " +
      "attach to. The first front end that needs a workbench starts this for you; run it yourself to keep " +
      "a workbench up between sessions. It stops CCB_WORKBENCH_GRACE seconds (default 600) after the last " +
      "front end left, or on SIGTERM/SIGINT.",
  },
  args: {
    workspace: workspaceArg,
    ...hostRuntimeArgs,
    "started-by": {
      type: "string",
      description: "The front end that started it (shown by `ccb workbench status`): ide, serve or acp.",
      valueHint: "front end",
    },
    "previous-url": {
      type: "string",
      description: "The gateway of a workbench that died (its port is asked for first, so VS Code finds its backups).",
      valueHint: "url",
    },
    ...commonArgs,
  },
  async run({ args, rawArgs }) {
    try {
      const { log } = setupLogging(args);
      const { hostGraceMs, runHost } = await import("../../src/workbench/share/host-process.ts");
      const startedBy = args["started-by"] ?? "ide";
      if (!(FRONT_ENDS as readonly string[]).includes(startedBy))
        throw new CcbError(
          "INVALID_ARGUMENT",
          `--started-by must be one of ${FRONT_ENDS.join(", ")}, got "${startedBy}".`,
        );
      const previousUrl = args["previous-url"];
      if (previousUrl !== undefined && !/^http:\/\/127\.0\.0\.1:\d+$/.test(previousUrl))
        throw new CcbError(
          "INVALID_ARGUMENT",
          `--previous-url must be a loopback gateway such as http://127.0.0.1:43123, got "${previousUrl}".`,
        );
      const code = await runHost(
        {
          roots: workspaceRoots(rawArgs).roots,
          startedBy: startedBy as (typeof FRONT_ENDS)[number],
          options: workbenchRuntime(runtimeOptionsFrom(args)),
          previousUrl,
        },
        {
          log,
          graceMs: hostGraceMs(process.env.CCB_WORKBENCH_GRACE),
          announce: (line) => process.stdout.write(`${line}\n`),
        },
      );
      process.exit(code);
    } catch (err) {
      reportFatal(err);
    }
  },
});

export default defineCommand({
  meta: {
    name: "workbench",
    description:
      "The workbench shared by ccb's front ends: the first of `ccb ide`, `ccb serve` and `ccb acp`\n" +
      "for a set of roots starts it in a host process of its own (`ccb workbench host`), and every\n" +
      "front end attaches to it; it outlives them by a grace period (CCB_WORKBENCH_GRACE seconds).\n" +
      "Examples:\n" +
      "  ccb workbench status              who runs the workbench of each workspace and who is attached\n" +
      "  ccb workbench link -w ~/src/app   a fresh one-time browser link to that workspace's workbench\n" +
      "  ccb workbench host -w ~/src/app   keep that workspace's workbench running in this terminal",
  },
  subCommands: { status, link, host },
});
