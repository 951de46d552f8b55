import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createLogging } from "../../cli/logging.ts";
import { isCcbError } from "../../src/core/errors.ts";
import { workspaceTools } from "../../src/tools/catalog.ts";
import { runTool } from "../../src/tools/kernel.ts";
import { startWorkbenchIde, type WorkbenchIde } from "../helpers/ide-workbench.ts";
import type { PersonPage } from "../helpers/person-page.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { eventually } from "../helpers/workbench.ts";

/**
 * Installing an extension on the model's request needs the person's consent in their workbench tab.
 * Real workbench (code-server + the bridge extension) in a real Chromium that is its person; the
 * model acts only through its tools (run through the tool kernel, as every front end runs them). It
 * writes a .vsix into the workspace the way a model would (`zip` over a package.json and an
 * extension.js that, once active, would run anything: here it writes a marker file), then asks
 * extensions_install for it. Attacks: nobody answers (refused after the wait, nothing installed; a
 * late "Install" on the stale dialog installs nothing), the person cancels, and the workbench's own
 * install command through vscode_execute_command. Control: the person clicks Install in the dialog,
 * which named the extension, its publisher and the file; the extension is installed and runs.
 */

const DIALOG = `(() => { const d = document.querySelector(".monaco-dialog-box"); if (!d || d.getBoundingClientRect().width === 0) return null; return d.textContent; })()`;
const BUTTON = (label: string) =>
  `(() => { const b = [...document.querySelectorAll(".monaco-dialog-box .monaco-button")].find((e) => e.textContent.trim() === ${JSON.stringify(label)}); if (!b) return null; const r = b.getBoundingClientRect(); return r.width > 0 ? { x: r.x + r.width / 2, y: r.y + r.height / 2 } : null; })()`;

// The person has 20 s to answer here (CCB_CONSENT_WAIT, read by the extension host the runtime starts
// with this process's environment), not the default 60 s the "nobody answers" test would wait out.
const WAIT_S = 20;
process.env.CCB_CONSENT_WAIT = String(WAIT_S);

describe("an extension the model asks for is installed only with the person's consent (real workbench, real Chromium)", () => {
  const tmp = tmpdirFixture({ prefix: "ccb-consent-" });
  const ws = join(tmp.path, "proj");
  const marker = join(tmp.path, "the-extension-ran");
  const { log } = createLogging({ level: process.env.CCB_TEST_LOG ?? "warn" });
  let w: WorkbenchIde;
  let person: PersonPage;

  const tool = (name: string) => workspaceTools.find((t) => t.name === name)!;
  /** The model calls a tool. */
  const model = (name: string, args: Record<string, unknown>) =>
    runTool(tool(name), tool(name).input.parse(args), {
      core: w.core,
      signal: AbortSignal.timeout(200_000),
      log: w.core.log,
    }) as Promise<{ text: string; structured: Record<string, unknown> }>;
  const installed = async () =>
    ((await w.bridgeCall("extensions.list", {})) as { extensions: { id: string }[] }).extensions.some(
      (e) => e.id.toLowerCase() === "evilpub.reviewer",
    );
  const denied = (p: Promise<unknown>, re: RegExp) =>
    assert.rejects(p, (err: unknown) => {
      assert.ok(isCcbError(err, "PERMISSION_DENIED"), String(err));
      assert.match((err as Error).message, re);
      return true;
    });
  /** The dialog shown for the model's request `asked` (which must not answer before it). */
  const dialogFor = (asked: Promise<{ text: string }>) =>
    Promise.race([
      person.until<string | null>("the install dialog", DIALOG, (v) => !!v),
      asked.then(
        (r) => Promise.reject(new Error(`answered without asking the person: ${r.text}`)),
        (err: Error) => Promise.reject(new Error(`answered without asking the person: ${err.message}`)),
      ),
    ]) as Promise<string>;
  /** The person reads the dialog, then clicks its button `label`. */
  const answer = async (label: string) => {
    const at = await person.until<{ x: number; y: number } | null>(`the dialog's ${label}`, BUTTON(label), (v) => !!v);
    await person.click(at!.x, at!.y);
    await person.until<string | null>("the dialog gone", DIALOG, (v) => v === null, 30_000);
  };

  before(async () => {
    mkdirSync(ws, { recursive: true });
    // What a model writes with its file tools, then zips with its terminal.
    const src = join(ws, "evil", "extension");
    mkdirSync(src, { recursive: true });
    writeFileSync(
      join(src, "package.json"),
      JSON.stringify({
        name: "reviewer",
        displayName: "Helpful Reviewer",
        publisher: "evilpub",
        version: "1.0.0",
        engines: { vscode: "^1.80.0" },
        main: "./extension.js",
        activationEvents: ["*"],
      }),
    );
    writeFileSync(
      join(src, "extension.js"),
      `exports.activate = () => { require("fs").writeFileSync(${JSON.stringify(marker)}, "ran"); };\n`,
    );
    execFileSync("zip", ["-q", "-r", "evil.vsix", "extension"], { cwd: join(ws, "evil") });
    w = await startWorkbenchIde({
      workspace: ws,
      stateDir: join(tmp.path, "state"),
      lockDir: join(tmp.path, "ide"),
      log,
    });
    person = w.window.person;
  });

  after(async () => {
    await w?.close();
    tmp.cleanup();
  });

  it("the workbench's install command through vscode_execute_command is refused before the workbench sees it", async () => {
    for (const command of ["workbench.extensions.installExtension", "workbench.extensions.command.installFromVSIX"])
      await denied(
        model("vscode_execute_command", { command, args: [{ $type: "uri", path: "evil/evil.vsix" }] }),
        /consent/,
      );
    assert.equal(await installed(), false);
  });

  it("the person cancels: refused, nothing installed", async () => {
    const asked = model("extensions_install", { vsixPath: "evil/evil.vsix" });
    asked.catch(() => undefined);
    const shown = await dialogFor(asked);
    // it names the extension, its publisher and where it came from
    assert.match(shown, /Helpful Reviewer/);
    assert.match(shown, /evilpub\.reviewer 1\.0\.0/);
    assert.match(shown, /publisher "evilpub"/);
    assert.match(shown, /evil\/evil\.vsix/);
    await answer("Cancel");
    await denied(asked, /did not allow/);
    assert.equal(await installed(), false);
    assert.equal(existsSync(marker), false);
  });

  it("nobody answers: refused after the wait; a late Install on the stale dialog installs nothing", async () => {
    const asked = model("extensions_install", { vsixPath: "evil/evil.vsix" });
    asked.catch(() => undefined);
    await dialogFor(asked);
    await denied(asked, new RegExp(`did not answer the install dialog .* within ${WAIT_S} s`));
    await answer("Install");
    await person.until<boolean>(
      "the person told the request had expired",
      `[...document.querySelectorAll(".notifications-toasts .notification-list-item")].some((e) => e.textContent.includes("had expired"))`,
      (v) => v,
      30_000,
    );
    assert.equal(await installed(), false);
    assert.equal(existsSync(marker), false);
  });

  it("control: the person clicks Install, and the extension is installed and runs", async () => {
    const asked = model("extensions_install", { vsixPath: "evil/evil.vsix" });
    asked.catch(() => undefined);
    await dialogFor(asked);
    await answer("Install");
    const r = await asked;
    assert.equal(r.structured.installed, true, r.text);
    await eventually("the extension listed", async () => ((await installed()) ? true : undefined), 60_000);
    await eventually("the extension ran", () => (existsSync(marker) ? true : undefined), 60_000);
    await model("extensions_uninstall", { id: "evilpub.reviewer" });
  });
});
