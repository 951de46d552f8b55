import assert from "node:assert/strict";
import { test } from "node:test";
import { applySystemPrompt, sessionOptionsFrom } from "../../../src/agent/session-options.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

test("session options: the shapes acpx and the Claude agent adapter send", () => {
  assert.deepEqual(sessionOptionsFrom({ systemPrompt: "S", claudeCode: { options: { maxTurns: 2 } } }, undefined), {
    systemPrompt: "S",
    maxTurns: 2,
  });
  assert.deepEqual(sessionOptionsFrom({ systemPrompt: { append: "A" }, maxTurns: 3 }, []), {
    systemPrompt: { append: "A" },
    maxTurns: 3,
  });
  assert.deepEqual(
    sessionOptionsFrom({ systemPrompt: "", maxTurns: 0 }, undefined),
    {},
    "empty or invalid values are not options",
  );
  assert.deepEqual(sessionOptionsFrom(null, undefined), {});
  const dir = tmpdirFixture();
  try {
    assert.deepEqual(sessionOptionsFrom(undefined, [dir.path]), { additionalDirectories: [dir.path] });
    assert.throws(() => sessionOptionsFrom(undefined, ["rel"]), /absolute/);
    assert.throws(() => sessionOptionsFrom(undefined, [`${dir.path}/missing`]), /not an existing directory/);
  } finally {
    dir.cleanup();
  }
  assert.equal(applySystemPrompt("base", undefined), "base");
  assert.equal(applySystemPrompt("base", "other"), "other");
  assert.equal(applySystemPrompt("base", { append: "more" }), "base\n\nmore");
});
