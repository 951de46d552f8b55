import { defineCommand } from "citty";

// Placeholder until its issue lands: says so and exits 2.
export default defineCommand({
  meta: { name: "runtime", description: "(not implemented yet)" },
  run() {
    process.stderr.write("ccb runtime: not implemented yet\n");
    process.exit(2);
  },
});
