import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  diagnosticsPayload,
  fileUri,
  findTextRange,
  pathsFromUri,
  selectionKey,
  severityName,
  textInRange,
} from "../../../../src/protocols/ide/converters.ts";

describe("ide converters", () => {
  it("file URIs are file:// + the raw path, never percent-encoded", () => {
    assert.equal(fileUri("/w/dir with space/ä#1.ts"), "file:///w/dir with space/ä#1.ts");
  });

  it("incoming URIs: raw path first, decoded form as a second candidate", () => {
    assert.deepEqual(pathsFromUri("file:///w/a b.ts"), ["/w/a b.ts"]);
    assert.deepEqual(pathsFromUri("file:///w/a%20b.ts"), ["/w/a%20b.ts", "/w/a b.ts"]);
    assert.deepEqual(pathsFromUri("file://localhost/w/x.ts"), ["/w/x.ts"]);
    assert.deepEqual(pathsFromUri("/w/plain.ts"), ["/w/plain.ts"]);
    assert.deepEqual(pathsFromUri("file:///w/100%.ts"), ["/w/100%.ts"]);
  });

  it("severities: VS Code names and enum numbers map to Error|Warning|Info|Hint", () => {
    assert.deepEqual(["error", "warning", "information", "hint"].map(severityName), [
      "Error",
      "Warning",
      "Info",
      "Hint",
    ]);
    assert.deepEqual([0, 1, 2, 3].map(severityName), ["Error", "Warning", "Info", "Hint"]);
    assert.equal(severityName("Information"), "Info");
  });

  it("diagnostics payload keeps only the fields the CLI parses", () => {
    const range = { start: { line: 1, character: 2 }, end: { line: 1, character: 4 } };
    assert.deepEqual(
      diagnosticsPayload([
        {
          path: "/w/a.ts",
          diagnostics: [{ message: "m", severity: "Error", range, source: undefined, code: undefined }],
        },
      ]),
      [{ uri: "file:///w/a.ts", diagnostics: [{ message: "m", severity: "Error", range }] }],
    );
  });

  it("findTextRange: startText to the end of endText, optionally to the end of the line", () => {
    const text = "const a = 1;\nfunction hello() {\n  return 1;\n}\n";
    assert.deepEqual(findTextRange(text, "function hello", "}", false), {
      start: { line: 1, character: 0 },
      end: { line: 3, character: 1 },
    });
    assert.deepEqual(findTextRange(text, "return", undefined, true), {
      start: { line: 2, character: 2 },
      end: { line: 2, character: 11 },
    });
    assert.equal(findTextRange(text, "missing", undefined, false), undefined);
    assert.equal(findTextRange(text, undefined, "x", false), undefined);
    assert.equal(textInRange(text, { start: { line: 1, character: 9 }, end: { line: 1, character: 14 } }), "hello");
  });

  it("selection keys differ when file, range or text differ", () => {
    const base = {
      filePath: "/a",
      text: "x",
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } },
    };
    assert.equal(selectionKey(base), selectionKey({ ...base }));
    assert.notEqual(selectionKey(base), selectionKey({ ...base, text: "y" }));
    assert.notEqual(selectionKey(base), selectionKey({ ...base, filePath: "/b" }));
    assert.notEqual(
      selectionKey(base),
      selectionKey({ ...base, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 2 } } }),
    );
  });
});
