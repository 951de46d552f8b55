import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { availableCommands, expandCommand, loadCommands } from "../../../src/agent/commands.ts";

const tmp = () => mkdtempSync(join(tmpdir(), "ccb-acp-unit-"));

test("commands: built-ins, project files with frontmatter, $ARGUMENTS expansion", () => {
  const dir = tmp();
  try {
    mkdirSync(join(dir, ".claude", "commands"), { recursive: true });
    mkdirSync(join(dir, ".ccb", "commands"), { recursive: true });
    writeFileSync(join(dir, ".claude", "commands", "fix.md"), "Fix issue $ARGUMENTS now");
    writeFileSync(join(dir, ".ccb", "commands", "review.md"), "---\ndescription: Our review\n---\nReview strictly.");
    const cmds = loadCommands(dir, undefined, undefined);
    assert.equal(cmds.find((c) => c.name === "review")?.description, "Our review", "project overrides built-in");
    assert.equal(expandCommand("/fix 42", cmds), "Fix issue 42 now");
    assert.equal(expandCommand("/review focus on tests", cmds), "Review strictly.\n\nfocus on tests");
    assert.equal(expandCommand("/unknown x", cmds), undefined);
    assert.equal(expandCommand("not a command", cmds), undefined);
    assert.ok(availableCommands(cmds).some((c) => c.name === "init"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
