import { defineCommand } from "citty";
import { reportFatal } from "../common.ts";

const status = defineCommand({
  meta: { name: "status", description: "List the shared workbenches (one per set of roots) and which ccb front ends are attached (front end, pid)." },
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

export default defineCommand({
  meta: {
    name: "workbench",
    description:
      "The workbench shared by ccb's front ends: the first of `ccb ide`, `ccb serve` (loopback) and `ccb acp` for a set of roots starts it, the others attach.\n" +
      "Examples:\n" +
      "  ccb workbench status              who runs the workbench of each workspace and who is attached",
  },
  subCommands: { status },
});
