import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseJsonc } from "../../../src/util/jsonc.ts";

describe("parseJsonc (launch.json as VS Code writes it)", () => {
  it("drops comments and trailing commas, keeps strings that look like them", () => {
    const text = [
      "{",
      "  // a line comment",
      '  "version": "0.2.0", /* a block comment */',
      '  "configurations": [',
      '    { "name": "a // not a comment", "url": "http://x/*y*/", "args": ["--x",], },',
      '    { "name": "quote \\" and , ]", }, // last',
      "  ],",
      "}",
    ].join("\n");
    assert.deepEqual(parseJsonc(text), {
      version: "0.2.0",
      configurations: [
        { name: "a // not a comment", url: "http://x/*y*/", args: ["--x"] },
        { name: 'quote " and , ]' },
      ],
    });
  });

  it("a comma between values stays; broken JSON still throws (control)", () => {
    assert.deepEqual(parseJsonc("[1, /* c */ 2 , // d\n 3]"), [1, 2, 3]);
    assert.throws(() => parseJsonc('{ "a": 1 "b": 2 }'), SyntaxError);
    assert.throws(() => parseJsonc("[1,, 2]"), SyntaxError);
  });
});
