import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pageScript } from "../../../src/platform/page-scripts.ts";
import { viewerHtml } from "../../../src/stream/viewer-html.ts";

describe("the stream's page scripts (src/stream/viewer/, bundled at build)", () => {
  it("the App document's client defines the global ccbStream its view calls, and nothing else runs", () => {
    const code = pageScript("stream-client");
    const window: Record<string, unknown> = {};
    new Function("window", code)(window);
    assert.deepEqual(Object.keys(window), ["ccbStream"]);
    assert.equal(typeof window.ccbStream, "function");
  });

  it("the viewer page carries its script inline, whole, as valid JavaScript", () => {
    const html = viewerHtml();
    const script = pageScript("stream-viewer");
    assert.ok(html.includes(`<script>${script}</script></body></html>`), "the bundle, unchanged");
    assert.doesNotThrow(() => new Function(script));
    assert.equal(html.match(/<\/script/gi)?.length, 1, "only the script's own end tag");
    assert.match(script, /\/stream\?token=/);
  });
});
