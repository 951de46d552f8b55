import { randomBytes } from "node:crypto";
import type { Core } from "../../core/core.ts";
import type { Logger } from "../../core/log.ts";
import { registerSecret } from "../../core/secret-vault.ts";
import { checkExposure } from "../../net/exposure.ts";
import { Gateway } from "../../net/gateway.ts";
import { newToken } from "../../util/secrets.ts";
import type { WorkbenchHttp } from "../gateway.ts";
import { startWorkbench, type WorkbenchHandle } from "../index.ts";
import type { RuntimeOptions } from "../launcher/types.ts";
import { ShareHost } from "./host.ts";
import type { FrontEnd, ShareStatus } from "./protocol.ts";
import {
  lockRecord,
  ownerAlive,
  readRecord,
  realRoots,
  removeRecord,
  type ShareRecord,
  shareKey,
  writeRecord,
} from "./record.ts";
import { RemoteBridge } from "./remote.ts";
import { fetchStatus } from "./status.ts";

/**
 * One workbench per set of roots, shared by every ccb front end of the user. The first front end
 * that needs one starts it in its own process (the owner) and publishes a discovery record
 * (record.ts); the others attach over the owner's loopback gateway (host.ts, remote.ts) and get an
 * EditorBridge in their own core.bridge, so every tool works unchanged. When the owner leaves or
 * dies, the attach channel closes and the attached front ends take over: one of them (under the
 * record lock) starts a new workbench and republishes, the others attach to it.
 */

export interface WorkbenchRuntimeOptions extends RuntimeOptions {
  /** false (`--no-share`): neither attach nor publish; a workbench of this front end's own. */
  share?: boolean | undefined;
}

export interface AcquireOptions {
  core: Core;
  log: Logger;
  frontEnd: FrontEnd;
  /** false: attach only (the lease is undefined when no workbench runs for these roots). */
  start: boolean;
  /** Used only when this front end starts the workbench (an attached one uses the owner's). */
  options: WorkbenchRuntimeOptions;
  env?: NodeJS.ProcessEnv | undefined;
  /** A loopback plain-HTTP gateway to mount the workbench on when owning it (serve --http); default a private one. */
  http?: WorkbenchHttp | undefined;
  /** The browser-facing gateway when another one (serve with TLS or a public URL): such a workbench is not shared. */
  publicHttp?: WorkbenchHttp | undefined;
  /** serve's bearer token for /session.json. */
  authToken?: string | undefined;
  /** Told when the lease moved to another workbench (a takeover: this front end's own, or another owner's gateway). */
  onMove?: (() => void) | undefined;
}

export interface WorkbenchLease {
  readonly role: "owner" | "attached";
  /** A one-time browser link to the workbench (undefined while it does not run). */
  url(): string | undefined;
  /** Resolves once the workbench's runtime answered (or could not start). */
  ready(): Promise<void>;
  /** The loopback gateway the workbench is served on. */
  gatewayUrl(): string;
  /** The in-process workbench while this front end owns it. */
  handle(): WorkbenchHandle | undefined;
  /** The loopback gateway the workbench is mounted on, while this front end owns it. */
  http(): WorkbenchHttp | undefined;
  /** Who is attached (undefined for an unshared workbench whose status cannot be asked). */
  status(): Promise<ShareStatus | undefined>;
  /** Leave: an owner stops its workbench (attached front ends take over); an attached one detaches. */
  release(): Promise<void>;
}

interface Inner {
  role: WorkbenchLease["role"];
  url(): string | undefined;
  ready: Promise<void>;
  gatewayUrl: string;
  handle?: WorkbenchHandle;
  http?: WorkbenchHttp;
  status(): Promise<ShareStatus | undefined>;
  /** Resolves when the channel to the owner closes unasked (attached only). */
  lost?: Promise<void>;
  close(): Promise<void>;
}

const LOCK_TIMEOUT_MS = 60_000;

export async function acquireWorkbench(o: AcquireOptions): Promise<WorkbenchLease | undefined> {
  if (o.options.share === false && !o.start) return undefined;
  if (o.options.share === false || o.publicHttp) {
    return leaseOf(await startOwner(o, undefined), o);
  }
  const first = await acquireInner(o);
  return first ? leaseOf(first, o) : undefined;
}

function leaseOf(first: Inner, o: AcquireOptions): WorkbenchLease {
  let inner = first;
  let released = false;
  let takingOver: Promise<void> | undefined;
  const watch = (i: Inner) => {
    void i.lost?.then(() => {
      if (released || inner !== i) return;
      takingOver = takeOver();
    });
  };
  const takeOver = async () => {
    o.log.info("share: the workbench owner left; taking over");
    o.core.bridge.setWorkbench(undefined);
    o.core.bridge.clear("The shared workbench's owner left; it is being restarted.");
    for (let attempt = 0; !released; attempt++) {
      try {
        const next = await acquireInner(o);
        if (released) {
          await next?.close();
          return;
        }
        if (next) {
          inner = next;
          watch(next);
          o.onMove?.();
          return;
        }
      } catch (err) {
        o.log.warn(`share: takeover failed: ${(err as Error).message}`);
      }
      // Attach-only front ends wait for another to start one.
      await new Promise((r) => setTimeout(r, Math.min(500 * (attempt + 1), 5000)));
    }
  };
  watch(first);
  return {
    get role() {
      return inner.role;
    },
    url: () => inner.url(),
    ready: () => inner.ready,
    gatewayUrl: () => inner.gatewayUrl,
    handle: () => inner.handle,
    http: () => inner.http,
    status: () => inner.status(),
    async release() {
      released = true;
      await takingOver?.catch(() => undefined);
      await inner.close();
    },
  };
}

/** Attach to the published workbench of these roots, or (start) start and publish one. */
async function acquireInner(o: AcquireOptions): Promise<Inner | undefined> {
  const env = o.env ?? process.env;
  const key = shareKey(o.core.workspace.roots);
  for (let round = 0; round < 20; round++) {
    const seen = await readRecord(key, env);
    if (seen && ownerAlive(seen)) {
      const attached = await tryAttach(seen, o);
      if (attached) return attached;
    }
    if (!o.start) return undefined;
    const unlock = await lockRecord(key, env, { timeoutMs: LOCK_TIMEOUT_MS });
    try {
      const cur = await readRecord(key, env);
      // Someone published meanwhile (or the record we could not reach was replaced): attach to it.
      if (cur && cur.instance !== seen?.instance) continue;
      if (cur) o.log.info(`share: replacing the stale workbench record of pid ${cur.pid}`);
      return await startOwner(o, key, cur?.gatewayUrl);
    } finally {
      await unlock();
    }
  }
  return undefined;
}

async function tryAttach(record: ShareRecord, o: AcquireOptions): Promise<Inner | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const t0 = performance.now();
    try {
      const remote = await RemoteBridge.connect(record, {
        core: o.core,
        log: o.log.child("share"),
        frontEnd: o.frontEnd,
      });
      await remote.firstState;
      if (!remote.open)
        throw new Error("the channel closed before the owner's first state (or it could not prove the secret)");
      const ms = Math.round(performance.now() - t0);
      o.log.info(
        `share: attached to the workbench of pid ${record.pid} (${record.frontEnd}) at ${record.gatewayUrl} in ${ms} ms`,
      );
      if (o.options.runtime || o.options.runtimeRoot || o.options.runtimeNode)
        o.log.info(
          "share: this front end's runtime settings apply only to a workbench it starts (--no-share starts one of its own)",
        );
      return {
        role: "attached",
        url: () => remote.url(),
        ready: remote.ready,
        gatewayUrl: record.gatewayUrl,
        status: () => fetchStatus(record),
        lost: remote.closed,
        close: () => remote.close(),
      };
    } catch (err) {
      o.log.debug(`share: attach to pid ${record.pid} failed: ${(err as Error).message}`);
    }
  }
  return undefined;
}

/**
 * Start the workbench in this process; with a key, publish it and accept attaches. A takeover
 * (`previousUrl`: the gateway of the owner that died) listens on the same port when it is free:
 * the workbench's documents are `vscode-remote://127.0.0.1:<port>/...` to VS Code, so only there
 * does hot exit find the backups of what a person had not saved.
 */
async function startOwner(o: AcquireOptions, key: string | undefined, previousUrl?: string): Promise<Inner> {
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
    http,
    publicHttp: o.publicHttp,
    log: o.log,
    runtime: o.options.runtime,
    runtimeRoot: o.options.runtimeRoot,
    runtimeNode: o.options.runtimeNode,
    headlessClient: o.options.headlessClient,
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
      owner: { frontEnd: o.frontEnd, pid: process.pid, since },
      workbench,
    });
    record = {
      version: 1,
      instance: randomBytes(12).toString("hex"),
      pid: process.pid,
      frontEnd: o.frontEnd,
      roots: realRoots(o.core.workspace.roots),
      gatewayUrl: http.url,
      secret,
      startedAt: since,
    };
    await writeRecord(key, record, env);
    o.log.info(`share: published the workbench of ${record.roots.join(", ")} (other ccb front ends attach to it)`);
  }
  let closing: Promise<void> | undefined;
  return {
    role: "owner",
    url: () => workbench.url(),
    ready: workbench.ready,
    gatewayUrl: http.url,
    handle: workbench,
    http,
    status: async () => host?.status(),
    close() {
      closing ??= (async () => {
        if (key && record) await removeRecord(key, record.instance, env).catch(() => undefined);
        await host?.close();
        await workbench.close();
        await own?.close();
      })();
      return closing;
    },
  };
}
