import type { Logger } from "../../src/core/log.ts";
import type { CdpSession } from "../../src/platform/cdp-pipe.ts";
import { type Chromium, launchChromium } from "../../src/platform/chromium.ts";
import { artifactSource } from "./artifacts.ts";

/** A code lens of the diff's proposed side: its text, its tooltip (which hunk) and its center. */
export interface Lens {
  text: string;
  tooltip: string;
  x: number;
  y: number;
}

/**
 * A person at a workbench page in a real Chromium, driven the way they act: the page is read with
 * DOM queries, and they act only with mouse and keyboard events (CDP Input), so every decision runs
 * through the workbench's own UI as a click or a keystroke, never through the editor bridge.
 */
export interface PersonPage {
  evaluate<T>(expression: string): Promise<T>;
  /** Poll `expression` in the page until `ok` holds. */
  until<T>(what: string, expression: string, ok: (v: T) => boolean, timeoutMs?: number): Promise<T>;
  /** A click (mouse moved, pressed and released at the point). */
  click(x: number, y: number): Promise<void>;
  /** The code lenses shown over the diff's proposed side, top to bottom (links and labels). */
  lenses(): Promise<Lens[]>;
  untilLenses(what: string, ok: (v: Lens[]) => boolean, timeoutMs?: number): Promise<Lens[]>;
  /**
   * Click the lens whose tooltip matches (e.g. /^Reject hunk 2 of/), once it is shown, and again
   * while that same lens stays in place (a click lost to a layout that moved); a TIMEOUT after 60 s.
   */
  clickLens(tooltip: RegExp): Promise<void>;
  /**
   * Click the diff editor's title-bar action labelled `label` (e.g. "Accept proposed changes") until
   * `decided` holds, as a person clicks again when nothing happened (a click lost to a layout that
   * moved, or refused because a model command had just run); a TIMEOUT error after 60 s. `decided`
   * is the review's own answer, not the button's absence: the next review's button has the same
   * label, and clicking it would decide a review the test did not mean to.
   */
  clickTitleAction(label: string, decided: () => boolean): Promise<void>;
  /** The center of the proposed side's line whose text matches `re` (a JS regex literal, as text). */
  proposedLine(re: string): Promise<{ x: number; y: number }>;
  /** Press a key (keyDown and keyUp), with modifiers held (CDP's bits: 1 Alt, 2 Ctrl, 4 Meta, 8 Shift). */
  key(key: string, code: string, keyCode: number, opts?: { text?: string; modifiers?: number }): Promise<void>;
  /** Run a command from the command palette: F1, type its title, Enter on the item once listed. */
  palette(title: string): Promise<void>;
}

/**
 * The lenses, read after the editor's next rendered frame: Monaco inserts a lens's widgets in one
 * frame and moves them to their line in a later one, so a read in between saw all four lenses of a
 * two-hunk review on one row (CI: "Accept, Accept, Reject, Reject"). The frame wait is bounded (a
 * page that draws no frames still answers), and untilLenses asks for two equal reads in a row.
 */
const LENSES = `(async () => {
  await new Promise((r) => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 1000); });
  return [...document.querySelectorAll(".monaco-diff-editor .editor.modified .codelens-decoration > a, .monaco-diff-editor .editor.modified .codelens-decoration > span")]
  .map((a) => { const r = a.getBoundingClientRect(); return { text: a.textContent.trim(), tooltip: a.getAttribute("title") ?? "", x: r.x + r.width / 2, y: r.y + r.height / 2, w: r.width }; })
  .filter((l) => l.w > 0 && l.text !== "|").sort((p, q) => p.y - q.y || p.x - q.x)
  .map(({ text, tooltip, x, y }) => ({ text, tooltip, x, y })); })()`;

/** What a person sees that could explain a wait that timed out: dialogs, notifications, tabs. */
const SCENE = `(() => { const t = (sel) => [...document.querySelectorAll(sel)].map((e) => (e.getAttribute("aria-label") || e.textContent || "").trim().slice(0, 200)).filter(Boolean);
  return { dialogs: t(".monaco-dialog-box"), notifications: t(".notifications-toasts .notification-list-item"), tabs: t(".tabs-container .tab"), quickInput: t(".quick-input-widget:not([style*='display: none']) .quick-input-title, .quick-input-widget:not([style*='display: none']) .quick-input-message") }; })()`;

export function personPage(cdp: CdpSession): PersonPage {
  const evaluate = async <T>(expression: string): Promise<T> => {
    const r = (await cdp.send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true })) as {
      result: { value?: unknown };
      exceptionDetails?: { text: string };
    };
    if (r.exceptionDetails) throw new Error(`page: ${r.exceptionDetails.text}`);
    return r.result.value as T;
  };
  const until = async <T>(what: string, expression: string, ok: (v: T) => boolean, timeoutMs = 120_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    let last: T | undefined;
    for (;;) {
      last = await evaluate<T>(expression).catch(() => undefined);
      if (last !== undefined && ok(last)) return last;
      if (Date.now() > deadline) {
        const scene = await evaluate<unknown>(SCENE).catch((e: Error) => e.message);
        throw new Error(`TIMEOUT ${what}: last ${JSON.stringify(last)}; the page shows ${JSON.stringify(scene)}`);
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  };
  const click = async (x: number, y: number) => {
    for (const type of ["mouseMoved", "mousePressed", "mouseReleased"])
      await cdp.send("Input.dispatchMouseEvent", { type, x, y, button: "left", clickCount: 1 });
  };
  const key = async (key: string, code: string, keyCode: number, opts: { text?: string; modifiers?: number } = {}) => {
    const common = {
      key,
      code,
      windowsVirtualKeyCode: keyCode,
      nativeVirtualKeyCode: keyCode,
      modifiers: opts.modifiers ?? 0,
    };
    await cdp.send("Input.dispatchKeyEvent", { type: "keyDown", ...common, ...(opts.text ? { text: opts.text } : {}) });
    await cdp.send("Input.dispatchKeyEvent", { type: "keyUp", ...common });
  };
  /** `ok` on a layout that held: the same lenses at the same places in two reads in a row. */
  const untilLenses = (what: string, ok: (v: Lens[]) => boolean, timeoutMs?: number) => {
    let previous = "";
    return until<Lens[]>(
      what,
      LENSES,
      (v) => {
        const now = JSON.stringify(v);
        const held = now === previous;
        previous = now;
        return held && ok(v);
      },
      timeoutMs,
    );
  };
  return {
    evaluate,
    until,
    click,
    key,
    lenses: () => evaluate<Lens[]>(LENSES),
    untilLenses,
    async clickLens(tooltip) {
      // The lens is marked in the page when found; a click that did nothing leaves that very node in
      // place (a decided hunk's lenses are rendered anew), so only then does the person click again:
      // never a node of a later review that happens to carry the same tooltip.
      const MARK = "data-ccb-person-clicked";
      const find = `(() => { document.querySelectorAll("[${MARK}]").forEach((e) => e.removeAttribute("${MARK}")); const re = new RegExp(${JSON.stringify(tooltip.source)}, ${JSON.stringify(tooltip.flags)}); const a = [...document.querySelectorAll(".monaco-diff-editor .editor.modified .codelens-decoration > a")].find((e) => re.test(e.getAttribute("title") ?? "") && e.getBoundingClientRect().width > 0); if (!a) return null; a.setAttribute("${MARK}", ""); const r = a.getBoundingClientRect(); return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`;
      const still = `(() => { const re = new RegExp(${JSON.stringify(tooltip.source)}, ${JSON.stringify(tooltip.flags)}); const a = document.querySelector("[${MARK}]"); return !!a && a.isConnected && re.test(a.getAttribute("title") ?? "") && a.getBoundingClientRect().width > 0; })()`;
      const deadline = Date.now() + 60_000;
      for (;;) {
        const at = await until<{ x: number; y: number } | null>(`a lens ${tooltip}`, find, (v) => v !== null);
        await click(at!.x, at!.y);
        const wait = Date.now() + 5_000;
        let there = true;
        while (there && Date.now() < wait) {
          await new Promise((r) => setTimeout(r, 250));
          there = await evaluate<boolean>(still).catch(() => false);
        }
        if (!there) return;
        if (Date.now() > deadline) throw new Error(`TIMEOUT the lens ${tooltip} is unchanged after clicks`);
      }
    },
    async clickTitleAction(label, decided) {
      const find = `(() => { const a = [...document.querySelectorAll(".editor-actions .action-label")].find((e) => (e.getAttribute("aria-label") ?? "").startsWith(${JSON.stringify(label)})); if (!a) return null; const r = a.getBoundingClientRect(); return r.width > 0 ? { x: r.x + r.width / 2, y: r.y + r.height / 2 } : null; })()`;
      const deadline = Date.now() + 60_000;
      while (!decided()) {
        if (Date.now() > deadline) throw new Error(`TIMEOUT the review is undecided after clicks on "${label}"`);
        const at = await until<{ x: number; y: number } | null>(`the title action "${label}"`, find, (v) => v !== null);
        if (decided()) return;
        await click(at!.x, at!.y);
        const wait = Date.now() + 5_000;
        while (!decided() && Date.now() < wait) await new Promise((r) => setTimeout(r, 250));
      }
    },
    async proposedLine(re) {
      return until<{ x: number; y: number }>(
        `the proposed line matching ${re}`,
        `(() => { const l = [...document.querySelectorAll(".monaco-diff-editor .editor.modified .view-line")].find((e) => ${re}.test(e.textContent)); if (!l) return undefined; const r = l.getBoundingClientRect(); return { x: r.x + 30, y: r.y + r.height / 2 }; })()`,
        (v) => v !== undefined,
      );
    },
    async palette(title) {
      // F1 again when nothing opened (a key lost while the workbench was busy), as a person would
      const open = `!!document.querySelector(".quick-input-widget .quick-input-box input") && getComputedStyle(document.querySelector(".quick-input-widget")).display !== "none"`;
      const deadline = Date.now() + 30_000;
      for (;;) {
        await key("F1", "F1", 112);
        const opened = await until<boolean>("the command palette open", open, (v) => v, 5_000).then(
          () => true,
          () => false,
        );
        if (opened) break;
        if (Date.now() > deadline) throw new Error("TIMEOUT the command palette does not open on F1");
      }
      await cdp.send("Input.insertText", { text: title });
      await until<boolean>(
        `"${title}" listed in the palette`,
        `[...document.querySelectorAll(".quick-input-widget .quick-input-list .monaco-list-row.focused")].some((r) => r.textContent.includes(${JSON.stringify(title)}))`,
        (v) => v,
        30_000,
      );
      await key("Enter", "Enter", 13, { text: "\r" });
    },
  };
}

/** A person's window: a real Chromium (1280×800) and the person at its page. */
export interface PersonWindow {
  chromium: Chromium;
  cdp: CdpSession;
  person: PersonPage;
}

/** Open a person's window on `url`: the page sized 1280×800 before it loads. */
export async function openPersonWindow(url: string, log: Logger): Promise<PersonWindow> {
  const chromium = await launchChromium({ url: "about:blank", log, width: 1280, height: 800 });
  const cdp = chromium.page;
  // What a failed test keeps of this window: its screenshot, its console and what is on screen.
  const consoleLines: string[] = [];
  const note = (line: string) => {
    consoleLines.push(`${new Date().toISOString()} ${line}`);
    if (consoleLines.length > 5_000) consoleLines.splice(0, consoleLines.length - 5_000);
  };
  cdp.on("Runtime.consoleAPICalled", (p) => {
    const args = (p.args as { value?: unknown; description?: string }[] | undefined) ?? [];
    note(
      `console.${String(p.type)} ${args.map((a) => (typeof a.value === "string" ? a.value : (a.description ?? JSON.stringify(a.value)))).join(" ")}`,
    );
  });
  cdp.on("Runtime.exceptionThrown", (p) => {
    const d = p.exceptionDetails as { text?: string; exception?: { description?: string } } | undefined;
    note(`exception ${d?.exception?.description ?? d?.text ?? ""}`);
  });
  cdp.on("Log.entryAdded", (p) => {
    const e = p.entry as { level?: string; source?: string; text?: string; url?: string } | undefined;
    note(`log.${e?.level} [${e?.source}] ${e?.text ?? ""}${e?.url ? ` (${e.url})` : ""}`);
  });
  const off = artifactSource("person-page", async () => {
    const out: Record<string, string | Uint8Array> = { "console.log": `${consoleLines.join("\n")}\n` };
    const shot = (await cdp.send("Page.captureScreenshot", { format: "png" })) as { data: string };
    out["screenshot.png"] = Buffer.from(shot.data, "base64");
    const scene = (await cdp.send("Runtime.evaluate", { expression: SCENE, returnByValue: true })) as {
      result: { value?: unknown };
    };
    out["scene.json"] = `${JSON.stringify(scene.result.value, null, 2)}\n`;
    return out;
  });
  void chromium.exited.then(off);
  try {
    await cdp.send("Page.enable");
    await cdp.send("Runtime.enable");
    await cdp.send("Log.enable");
    await cdp.send("Emulation.setDeviceMetricsOverride", {
      width: 1280,
      height: 800,
      deviceScaleFactor: 1,
      mobile: false,
    });
    await cdp.send("Page.navigate", { url });
  } catch (err) {
    off();
    await chromium.close();
    throw err;
  }
  return { chromium, cdp, person: personPage(cdp) };
}

/** What `editor.state` answers about the active editor (the part a cursor check reads). */
interface ActiveState {
  active?: { uri: string; selections: { active: { line: number } }[] };
}

/**
 * The person clicks into the diff's proposed line matching `re` (zero-based `line`), and the click
 * has reached the extension host (its selection events are asynchronous; a person is slower).
 */
export async function cursorInto(
  person: PersonPage,
  re: string,
  line: number,
  editorState: () => Promise<unknown>,
): Promise<void> {
  const at = await person.proposedLine(re);
  await person.click(at.x, at.y);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const st = (await editorState()) as ActiveState;
    if (st.active?.uri.startsWith("ccb-proposed:") && st.active.selections[0]?.active.line === line) return;
    if (Date.now() > deadline) throw new Error(`TIMEOUT the cursor on line ${line}: ${JSON.stringify(st.active)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
