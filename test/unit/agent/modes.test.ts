import assert from "node:assert/strict";
import { test } from "node:test";
import { bypassRefusal, configOptions, modeState } from "../../../src/agent/modes.ts";

test("modes: bypassPermissions refused as root outside a sandbox, with the reason", () => {
  const root = { uid: 0, env: {}, containerMarker: false };
  assert.match(bypassRefusal(root)!, /root outside a sandbox/);
  assert.equal(bypassRefusal({ ...root, containerMarker: true }), undefined);
  assert.equal(bypassRefusal({ ...root, env: { CCB_SANDBOX: "1" } }), undefined);
  assert.equal(bypassRefusal({ uid: 1000, env: {}, containerMarker: false }), undefined);
  assert.ok(!modeState("default", root).availableModes.some((m) => m.id === "bypassPermissions"));
  const opts = configOptions({ mode: "plan", model: "m1", models: ["m1", "m2"], thought: "off" }, root);
  assert.deepEqual(
    opts.map((o) => [o.id, o.category, o.currentValue]),
    [
      ["mode", "mode", "plan"],
      ["model", "model", "m1"],
      ["thought_level", "thought_level", "off"],
    ],
  );
});
