import { randomBytes } from "node:crypto";
import type { Core, EditorWriter } from "../../core/core.ts";
import { liveClientsOf } from "../../core/live-clients.ts";
import type { Logger } from "../../core/log.ts";
import { registerSecret } from "../../core/secret-vault.ts";
import { checkExposure } from "../../net/exposure.ts";
import { Gateway } from "../../net/gateway.ts";
import { newToken } from "../../util/secrets.ts";
import { sharePresence } from "../checkpoints-view.ts";
import { startWorkbench, type WorkbenchHandle } from "../index.ts";
import type { WorkbenchHttp } from "../routes.ts";
import { type RuntimeOptions, workbenchRuntime } from "../runtime-flags.ts";
import { ShareHost } from "./host.ts";
import type { OwnerKind, ShareStatus } from "./protocol.ts";
import { realRoots, removeRecord, type ShareRecord, writeRecord } from "./record.ts";

/** A workbench a front end holds: one it runs (owner) or one it reaches over the attach channel (attached). */
export interface HeldWorkbench {
  role: "owner" | "attached";
  /** Who runs it: `kind` "host" (the detached host) or a front end; startedHere: this process started it. */
  runBy: { kind: string; pid: number; startedHere: boolean };
  url(): string | undefined;
  /** A one-time link to the workbench's `/app` page (undefined when the owner does not answer). */
  appLink(): Promise<string | undefined>;
  ready: Promise<void>;
  gatewayUrl: string;
  handle?: WorkbenchHandle;
  http?: WorkbenchHttp;
  status(): Promise<ShareStatus | undefined>;
  /** Resolves when the channel to the owner closes unasked (attached only). */
  lost?: Promise<void>;
  /** Told the number of attached front ends whenever it changes (a published owner only). */
  onPeersChange?: (listener: (count: number) => void) => () => void;
  close(): Promise<void>;
}

export interface OwnerOptions {
  core: Core;
  /** The core's editor state, as the lease (or the host) that holds this workbench lets it write it. */
  editor: EditorWriter;
  log: Logger;
  /** Who runs it: a front end in its own process, or the detached host (host-process.ts). */
  owner: OwnerKind;
  /** The front end that had the host started (status only). */
  startedBy?: string | undefined;
  options: RuntimeOptions;
  env?: NodeJS.ProcessEnv | undefined;
  /** A loopback plain-HTTP gateway to mount the workbench on (serve --http); default a private one. */
  http?: WorkbenchHttp | undefined;
  /** The browser-facing gateway when another one (serve with TLS or a public URL): such a workbench is not shared. */
  publicHttp?: WorkbenchHttp | undefined;
  authToken?: string | undefined;
  /** How long the host stays after its last front end left (status only). */
  graceMs?: number | undefined;
}

/**
 * Start the workbench in this process; with a key, publish it and accept attaches. A takeover
 * (`previousUrl`: the gateway of the owner that died) listens on the same port when it is free:
 * the workbench's documents are `vscode-remote://127.0.0.1:<port>/...` to VS Code, so only there
 * does hot exit find the backups of what a person had not saved.
 */
export async function startOwner(
  o: OwnerOptions,
  key: string | undefined,
  previousUrl?: string,
): Promise<HeldWorkbench> {
  const env = o.env ?? process.env;
  let own: Gateway | undefined;
  let http = o.http;
  if (!http) {
    const host = "127.0.0.1";
    checkExposure({ listener: "workbench", host });
    // The gateway retries a port picker on EADDRINUSE: the previous owner's port first, then any.
    const previous = previousUrl ? Number(new URL(previousUrl).port) : 0;
    let picks = 0;
    const port = () => {
      if (picks++ === 0 && previous) return previous;
      if (previous && picks === 2)
        o.log.info(
          `share: port ${previous} of the previous owner is taken; unsaved buffers it backed up stay in its user data`,
        );
      return 0;
    };
    own = new Gateway({ host, port, log: o.log.child("gateway") });
    http = { gateway: own, url: await own.listen() };
  }
  const workbench = startWorkbench({
    core: o.core,
    editor: o.editor,
    http,
    publicHttp: o.publicHttp,
    log: o.log,
    ...workbenchRuntime(o.options),
    authToken: o.authToken,
    keepUserData: key,
    env,
  });
  let host: ShareHost | undefined;
  let record: ShareRecord | undefined;
  if (key) {
    const secret = newToken();
    registerSecret(secret);
    const since = Date.now();
    host = new ShareHost({
      core: o.core,
      log: o.log.child("share"),
      http,
      secret,
      owner: {
        frontEnd: o.owner,
        pid: process.pid,
        since,
        ...(o.startedBy ? { startedBy: o.startedBy } : {}),
        ...(o.graceMs !== undefined ? { graceMs: o.graceMs } : {}),
      },
      workbench,
    });
    record = {
      version: 2,
      instance: randomBytes(12).toString("hex"),
      pid: process.pid,
      frontEnd: o.owner,
      roots: realRoots(o.core.workspace.roots),
      gatewayUrl: http.url,
      secret,
      startedAt: since,
    };
    await writeRecord(key, record, env);
    o.log.info(`share: published the workbench of ${record.roots.join(", ")} (other ccb front ends attach to it)`);
  }
  const shareHost = host;
  // The person's "Agent changes" view names who runs this workbench, who is attached to it and their clients.
  workbench.checkpoints.setPresence(
    sharePresence(
      { kind: o.owner, pid: process.pid, since: Date.now(), startedBy: o.startedBy },
      () => shareHost?.attached ?? [],
      liveClientsOf(o.core),
      (listener) => shareHost?.onAttachedChange(listener) ?? (() => undefined),
    ),
  );
  let closing: Promise<void> | undefined;
  return {
    role: "owner",
    runBy: { kind: o.owner, pid: process.pid, startedHere: true },
    url: () => workbench.url(),
    appLink: async () => workbench.link("/app"),
    ready: workbench.ready,
    gatewayUrl: http.url,
    handle: workbench,
    http,
    status: async () => shareHost?.status(),
    ...(shareHost ? { onPeersChange: (l: (count: number) => void) => shareHost.onPeersChange(l) } : {}),
    close() {
      closing ??= (async () => {
        if (key && record) await removeRecord(key, record.instance, env).catch(() => undefined);
        await shareHost?.close();
        await workbench.close();
        await own?.close();
      })();
      return closing;
    },
  };
}
