import { defineCommand } from "citty";
import { reportFatal, workspaceRoots } from "../common.ts";

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
      "Print a fresh one-time browser link to the shared workbench of the workspace folders (after a\n" +
      "takeover the workbench runs behind another front end's gateway and older links are dead).",
  },
  args: {
    workspace: {
      type: "string",
      alias: "w",
      description:
        "Workspace folder; repeat for several, as given to the front ends (env CCB_WORKSPACE). Default: cwd.",
      valueHint: "dir",
    },
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

export default defineCommand({
  meta: {
    name: "workbench",
    description:
      "The workbench shared by ccb's front ends: the first of `ccb ide`, `ccb serve` (loopback)\n" +
      "and `ccb acp` for a set of roots starts it, the others attach to it.\n" +
      "Examples:\n" +
      "  ccb workbench status              who runs the workbench of each workspace and who is attached\n" +
      "  ccb workbench link -w ~/src/app   a fresh one-time browser link to that workspace's workbench",
  },
  subCommands: { status, link },
});
