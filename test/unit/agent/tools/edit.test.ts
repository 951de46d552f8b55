import assert from "node:assert/strict";
import { test } from "node:test";
import { stripAnsi } from "../../../../src/agent/tools/bash.ts";
import { applyEdit } from "../../../../src/agent/tools/edit.ts";

test("edit tool: exact replacement, uniqueness, replace_all; bash output loses ANSI codes", () => {
  assert.equal(applyEdit("a b a", { path: "f", old_string: "b", new_string: "$&c" }, "/f"), "a $&c a");
  assert.throws(() => applyEdit("a b a", { path: "f", old_string: "a", new_string: "x" }, "/f"), /occurs 2 times/);
  assert.equal(applyEdit("a b a", { path: "f", old_string: "a", new_string: "x", replace_all: true }, "/f"), "x b x");
  assert.throws(() => applyEdit("abc", { path: "f", old_string: "zz", new_string: "x" }, "/f"), /not found/);
  assert.equal(stripAnsi("\x1b[31mred\x1b[0m\r\nok"), "red\nok");
});
