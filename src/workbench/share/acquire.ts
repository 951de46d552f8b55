import type { Core, EditorWriter } from "../../core/core.ts";
import { liveClientsOf } from "../../core/live-clients.ts";
import type { Logger } from "../../core/log.ts";
import type { WorkbenchHandle } from "../index.ts";
import type { WorkbenchHttp } from "../routes.ts";
import type { WorkbenchRuntimeOptions } from "../runtime-flags.ts";
import { spawnHost } from "./host-process.ts";
import { type HeldWorkbench, startOwner } from "./owner.ts";
import type { FrontEnd, ShareStatus } from "./protocol.ts";
import { lockRecord, ownerAlive, readRecord, type ShareRecord, shareKey } from "./record.ts";
import { RemoteBridge } from "./remote.ts";
import { fetchStatus } from "./status.ts";

/**
 * One workbench per set of roots, shared by every ccb front end of the user. The first front end
 * that needs one spawns the detached workbench host (host-process.ts), which runs it and publishes
 * a discovery record (record.ts); every front end, that one too, attaches over the host's loopback
 * gateway (host.ts, remote.ts) and gets an EditorBridge in its own core.bridge, so every tool works
 * unchanged, and no front end's exit moves the workbench. The lease is the one writer of its core's
 * editor state and terminal relay: it claims them (Core.claimEditor) and hands the writer to the
 * workbench it holds; a takeover claims anew, so nothing the lost workbench still says lands. Only `ccb serve --http` on a private
 * loopback gateway runs the workbench in its own process (the owner), mounted on its own gateway
 * beside /mcp and the App. When the owner or host dies, the attach channel closes and the attached
 * front ends take over: one of them (under the record lock) starts a new host and the others attach.
 */

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
  /** Who runs the workbench now (the detached host, or a front end), and whether this process started it. */
  runBy(): HeldWorkbench["runBy"];
  /** A one-time browser link to the workbench (undefined while it does not run). */
  url(): string | undefined;
  /** A one-time link to the workbench's `/app` page, wherever the workbench runs. */
  appLink(): Promise<string | undefined>;
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

type Inner = HeldWorkbench;

const LOCK_TIMEOUT_MS = 60_000;

export async function acquireWorkbench(o: AcquireOptions): Promise<WorkbenchLease | undefined> {
  if (o.options.share === false && !o.start) return undefined;
  const editor = claim(o);
  if (o.options.share === false || o.publicHttp) {
    return leaseOf(await startOwner(ownerOptions(o, editor), undefined), o);
  }
  const first = await acquireInner(o, editor);
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
    const editor = claim(o);
    editor.setWorkbench(undefined);
    editor.clear("The shared workbench's owner left; it is being restarted.");
    for (let attempt = 0; !released; attempt++) {
      try {
        const next = await acquireInner(o, editor);
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
    runBy: () => inner.runBy,
    url: () => inner.url(),
    appLink: () => inner.appLink(),
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
async function acquireInner(o: AcquireOptions, editor: EditorWriter): Promise<Inner | undefined> {
  const env = o.env ?? process.env;
  const key = shareKey(o.core.workspace.roots);
  for (let round = 0; round < 20; round++) {
    const seen = await readRecord(key, env);
    if (seen && ownerAlive(seen)) {
      const attached = await tryAttach(seen, o, false, editor);
      if (attached) return attached;
    }
    if (!o.start) return undefined;
    let spawned: ShareRecord;
    const unlock = await lockRecord(key, env, { timeoutMs: LOCK_TIMEOUT_MS });
    try {
      const cur = await readRecord(key, env);
      // Someone published meanwhile (or the record we could not reach was replaced): attach to it.
      if (cur && cur.instance !== seen?.instance) continue;
      if (cur) o.log.info(`share: replacing the stale workbench record of pid ${cur.pid}`);
      // serve --http mounts the workbench beside /mcp on its own gateway; every other front end uses a host
      if (o.http) return await startOwner(ownerOptions(o, editor), key, cur?.gatewayUrl);
      spawned = await spawnHost(
        { roots: [...o.core.workspace.roots], startedBy: o.frontEnd, options: o.options, previousUrl: cur?.gatewayUrl },
        { env, log: o.log },
      );
    } finally {
      await unlock();
    }
    const attached = await tryAttach(spawned, o, true, editor);
    if (attached) return attached;
  }
  return undefined;
}

/** The lease's right to write its core's editor state (a newer claim, a takeover's, revokes it). */
function claim(o: AcquireOptions): EditorWriter {
  return o.core.claimEditor(`the workbench lease of ccb ${o.frontEnd}`);
}

function ownerOptions(o: AcquireOptions, editor: EditorWriter): Parameters<typeof startOwner>[0] {
  return {
    core: o.core,
    editor,
    log: o.log,
    owner: o.frontEnd,
    options: o.options,
    env: o.env,
    http: o.http,
    publicHttp: o.publicHttp,
    authToken: o.authToken,
  };
}

/** Attach to the workbench of `record` (`started`: the host this front end just spawned). */
async function tryAttach(
  record: ShareRecord,
  o: AcquireOptions,
  started: boolean,
  editor: EditorWriter,
): Promise<Inner | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const t0 = performance.now();
    try {
      const remote = await RemoteBridge.connect(record, {
        editor,
        log: o.log.child("share"),
        frontEnd: o.frontEnd,
        clients: liveClientsOf(o.core),
      });
      await remote.firstState;
      if (!remote.open)
        throw new Error("the channel closed before the owner's first state (or it could not prove the secret)");
      const ms = Math.round(performance.now() - t0);
      o.log.info(
        `share: attached to the workbench of pid ${record.pid} (${record.frontEnd}) at ${record.gatewayUrl} in ${ms} ms`,
      );
      if (!started && (o.options.runtime || o.options.runtimeRoot || o.options.runtimeNode))
        o.log.info(
          "share: this front end's runtime settings apply only to a workbench it starts (--no-share starts one of its own)",
        );
      return {
        role: "attached",
        runBy: { kind: record.frontEnd, pid: record.pid, startedHere: started },
        url: () => remote.url(),
        appLink: () => remote.appLink(),
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
