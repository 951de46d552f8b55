import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { MODE_IDS } from "../../../src/agent/modes.ts";
import { decide, isSafeCommand, PermissionRules, type ToolAccess } from "../../../src/agent/permissions.ts";

const tmp = () => mkdtempSync(join(tmpdir(), "ccb-acp-unit-"));

test("permissions: every mode decides as documented", () => {
  const rules = new PermissionRules(undefined, "/p");
  const edit: ToolAccess = { category: "edit", ruleKey: "edit" };
  const exec: ToolAccess = { category: "execute", ruleKey: "bash:rm -rf x" };
  const safe: ToolAccess = { category: "execute", ruleKey: "bash:ls", safe: true };
  const read: ToolAccess = { category: "read", ruleKey: "read" };
  const table: Record<string, string[]> = {
    default: ["allow", "ask", "ask", "ask"],
    acceptEdits: ["allow", "allow", "ask", "ask"],
    plan: ["allow", "deny", "deny", "deny"],
    dontAsk: ["allow", "deny", "deny", "deny"],
    bypassPermissions: ["allow", "allow", "allow", "allow"],
    auto: ["allow", "allow", "ask", "allow"],
  };
  for (const mode of MODE_IDS) {
    assert.deepEqual(
      [read, edit, exec, safe].map((a) => decide(mode, a, rules).kind),
      table[mode],
      mode,
    );
  }
  rules.remember("bash:rm -rf x", "allow");
  assert.equal(decide("default", exec, rules).kind, "allow");
  assert.equal(decide("dontAsk", exec, rules).kind, "allow");
  assert.equal(decide("plan", exec, rules).kind, "deny", "plan mode stays read-only even with rules");
  rules.remember("edit", "deny");
  assert.equal(decide("bypassPermissions", edit, rules).kind, "deny");
  assert.equal(isSafeCommand("git status"), true);
  assert.equal(isSafeCommand("ls -la; rm -rf /"), false);
  assert.equal(isSafeCommand("git push"), false);
  assert.equal(isSafeCommand("find . -delete"), false);
});

test("permissions: always-rules persist per project", () => {
  const dir = tmp();
  try {
    const a = PermissionRules.forProject(dir, "/proj/a");
    a.remember("edit", "allow");
    a.remember("bash:make", "deny");
    const again = PermissionRules.forProject(dir, "/proj/a");
    assert.equal(again.isAllowed("edit"), true);
    assert.equal(again.isDenied("bash:make"), true);
    assert.equal(PermissionRules.forProject(dir, "/proj/b").isAllowed("edit"), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
