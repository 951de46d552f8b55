import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inflateRawSync } from "node:zlib";
import * as vscode from "vscode";
import { BridgeError } from "./convert.ts";
import { refusedForModel } from "./model-guard.ts";

/**
 * The person's consent before an extension the model asked for is installed: an installed
 * extension runs in this extension host with the person's rights (their files, programs, every
 * workbench command, ccb's review decisions included), so nothing is installed on a model's request
 * until the person allows it in a modal dialog of their workbench tab that names the extension, its
 * publisher and where it comes from. A .vsix is read once into a private copy (0700 folder) that
 * the dialog describes and the workbench installs, so the workspace file cannot change in between.
 * Refused (PERMISSION_DENIED) when no person's tab serves (ccb's headless client has no person: its
 * window is never focused), when nobody answers within consentWaitMs(), or when the answer came
 * while a model command ran (model-guard.ts). The person's own installs (Extensions view, command
 * palette) never come here.
 */

/** How long the person has to answer, by default. */
export const CONSENT_WAIT_MS = 60_000;

/**
 * How long the person has to answer: CCB_CONSENT_WAIT seconds (5 to 600) from the environment ccb
 * started the runtime with (the extension host inherits it; nothing the model runs reaches it),
 * else CONSENT_WAIT_MS.
 */
export function consentWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CCB_CONSENT_WAIT;
  const s = raw && /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  return s >= 5 && s <= 600 ? s * 1000 : CONSENT_WAIT_MS;
}
const MANIFEST = "extension/package.json";
const MAX_VSIX_BYTES = 200 * 1024 * 1024;
const MAX_MANIFEST_BYTES = 1024 * 1024;

let personSeen = false;

/** Follow this window's focus: a window that was ever focused is a person's (ccb's headless client never is). */
export function trackPersonWindow(): vscode.Disposable {
  if (vscode.window.state.focused) personSeen = true;
  return vscode.window.onDidChangeWindowState((s) => {
    if (s.focused) personSeen = true;
  });
}

export interface VsixManifest {
  publisher: string;
  name: string;
  version: string;
  displayName?: string;
}

/** `extension/package.json` of a .vsix (a zip): found through the central directory, stored or deflated. */
export function vsixManifest(zip: Buffer): VsixManifest {
  const bad = (why: string) => new BridgeError("INVALID_ARGUMENT", `Not a valid .vsix: ${why}.`);
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--)
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd < 0) throw bad("no zip directory");
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  for (let n = 0; n < count; n++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== 0x02014b50) throw bad("a broken zip directory");
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLen = zip.readUInt16LE(at + 28);
    const next = at + 46 + nameLen + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const name = zip.toString("utf8", at + 46, at + 46 + nameLen);
    if (name === MANIFEST) {
      const local = zip.readUInt32LE(at + 42);
      if (local + 30 > zip.length || zip.readUInt32LE(local) !== 0x04034b50) throw bad("a broken zip entry");
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + size);
      if (zip.readUInt32LE(at + 24) > MAX_MANIFEST_BYTES) throw bad(`${MANIFEST} is too large`);
      let text: string;
      if (method === 0) text = data.toString("utf8");
      else if (method === 8) text = inflateRawSync(data, { maxOutputLength: MAX_MANIFEST_BYTES }).toString("utf8");
      else throw bad(`${MANIFEST} is compressed with method ${method}`);
      let m: Record<string, unknown>;
      try {
        m = JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw bad(`${MANIFEST} is not JSON`);
      }
      const str = (k: string) => (typeof m[k] === "string" ? (m[k] as string) : "");
      if (!str("publisher") || !str("name")) throw bad(`${MANIFEST} names no publisher or name`);
      return {
        publisher: str("publisher"),
        name: str("name"),
        version: str("version"),
        ...(str("displayName") ? { displayName: str("displayName") } : {}),
      };
    }
    at = next;
  }
  throw bad(`no ${MANIFEST}`);
}

/** What the workbench installs once the person allowed it: a marketplace id, or the private copy of the .vsix. */
export interface Consented {
  target: string | vscode.Uri;
  /** Remove the private copy. */
  done(): Promise<void>;
}

/** Ask the person; resolves with what to install, or throws PERMISSION_DENIED. */
export async function askToInstall(p: { id?: string; vsixPath?: string }): Promise<Consented> {
  if (!personSeen)
    throw new BridgeError(
      "PERMISSION_DENIED",
      `Installing ${p.id ?? p.vsixPath} needs the person's consent in their workbench tab, and no person's tab is open (only ccb's headless window): nothing was installed.`,
      "Ask the person to open the workbench (vscode_open gives its address) and try again, or to install the extension themselves.",
    );
  let target: string | vscode.Uri;
  let what: string;
  let where: string;
  let dir: string | undefined;
  if (p.vsixPath) {
    const bytes = await readFile(p.vsixPath).catch((err: Error) => {
      throw new BridgeError("NOT_FOUND", `The editor cannot read ${p.vsixPath}: ${err.message}`);
    });
    if (bytes.length > MAX_VSIX_BYTES) throw new BridgeError("INVALID_ARGUMENT", `${p.vsixPath} is too large.`);
    const m = vsixManifest(bytes);
    dir = await mkdtemp(join(tmpdir(), "ccb-vsix-"));
    const copy = join(dir, `${m.publisher}.${m.name}.vsix`.replace(/[^\w.-]/g, "_"));
    await writeFile(copy, bytes, { mode: 0o600 });
    target = vscode.Uri.file(copy);
    what = `"${m.displayName ?? m.name}" (${m.publisher}.${m.name}${m.version ? ` ${m.version}` : ""}), publisher "${m.publisher}"`;
    where = `the file ${p.vsixPath} in your workspace, which the model can write: the publisher is whatever that file claims`;
  } else if (p.id) {
    target = p.id;
    what = `${p.id.replace(/@.*$/, "")}${p.id.includes("@") ? ` version ${p.id.replace(/^.*@/, "")}` : ""}, publisher "${p.id.replace(/\..*$/, "")}"`;
    where = "the workbench's extension marketplace";
  } else throw new BridgeError("INVALID_ARGUMENT", "Give an id or a .vsix path.");
  const done = async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  };
  try {
    const asked = vscode.window.showWarningMessage(
      `The model asks to install the extension ${what}.`,
      {
        modal: true,
        detail:
          `From ${where}.\n\nAn extension runs with your rights: it can read and change your files, run programs, ` +
          "and run any workbench command, including accepting or rejecting ccb's reviews for you. " +
          "Install it only if you asked for it.",
      },
      "Install",
    );
    const waitMs = consentWaitMs();
    const answer = await Promise.race([asked, new Promise<"expired">((r) => setTimeout(() => r("expired"), waitMs))]);
    if (answer === "expired") {
      // the dialog stays until answered: an answer now changes nothing, and the person is told so
      void Promise.resolve(asked).then((late) => {
        if (late === "Install")
          void vscode.window.showInformationMessage(
            `ccb: that install request had expired, so ${what} was not installed. Install it yourself if you want it.`,
          );
      });
      throw new BridgeError(
        "PERMISSION_DENIED",
        `The person did not answer the install dialog for ${what} within ${waitMs / 1000} s: nothing was installed.`,
        "Tell the person why you need it and ask them to allow it in the workbench, or to install it themselves.",
      );
    }
    if (answer !== "Install" || refusedForModel("allowing an extension install"))
      throw new BridgeError(
        "PERMISSION_DENIED",
        `The person did not allow installing ${what}: nothing was installed.`,
        "Continue without it, or ask the person whether they want it installed.",
      );
    return { target, done };
  } catch (err) {
    await done();
    throw err;
  }
}
