import { Readable, Writable } from "node:stream";
import { resolveAgentEnv } from "../../agent/settings.ts";
import type { AcpWorkbenchOptions } from "../../agent/workbench.ts";
import type { Logger } from "../../core/log.ts";

export interface StartAcpOptions {
  log: Logger;
  env?: NodeJS.ProcessEnv;
  input?: NodeJS.ReadableStream & Readable;
  output?: NodeJS.WritableStream & Writable;
  /** The sessions' live editor: attach to a workbench (default), or start one (`--workbench`). */
  workbench?: AcpWorkbenchOptions | undefined;
}

/** The incoming frame cap: CCB_ACP_MAX_FRAME_MB (whole MiB, 1-1024), default 64 MiB. */
function maxFrameBytes(env: NodeJS.ProcessEnv): number {
  const mb = Number(env.CCB_ACP_MAX_FRAME_MB);
  return (Number.isInteger(mb) && mb >= 1 && mb <= 1024 ? mb : 64) * 1024 * 1024;
}

/**
 * `ccb acp`: ACP over stdio, v1 or v2 as the client's `initialize` asks (the SDK's router). stdout carries only protocol frames (logs go to stderr; tools run with
 * piped stdio or PTYs). Resolves when the client closes stdin. A bad environment (empty PATH/HOME)
 * throws a CcbError before anything is read, which the CLI prints and exits on.
 */
export async function startAcpAgent(options: StartAcpOptions): Promise<void> {
  const env = resolveAgentEnv(options.env ?? process.env);
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  output.on("error", (err: NodeJS.ErrnoException) => {
    // the client went away (EPIPE): end the connection, not with a crash
    options.log.debug(`stdout closed: ${err.code ?? err.message}`);
    input.destroy();
  });
  const [{ boundedNdJsonStream }, { createAcpRouter }] = await Promise.all([
    import("./framing.ts"),
    import("./router.ts"),
  ]);
  let closing: Promise<void> = Promise.resolve();
  const router = createAcpRouter({
    env,
    log: options.log.child("acp"),
    workbench: options.workbench,
    onClosing: (done) => (closing = done),
  });
  const stream = boundedNdJsonStream(
    Writable.toWeb(output) as WritableStream<Uint8Array>,
    Readable.toWeb(input) as ReadableStream<Uint8Array>,
    {
      maxFrameBytes: maxFrameBytes(options.env ?? process.env),
      onDrop: (bytes, id) =>
        options.log.warn(
          `dropped an incoming message of ${bytes} bytes (over the frame limit), request id ${JSON.stringify(id)}`,
        ),
    },
  );
  const conn = router.connect(stream);
  options.log.debug(`acp agent ready (data ${env.dataDir})`);
  await conn.closed;
  // the sessions close (a workbench this process started stops and unpublishes), within a bound
  await new Promise((r) => setImmediate(r));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closing, new Promise((r) => (timer = setTimeout(r, CLOSE_BOUND_MS)))]);
  clearTimeout(timer);
}

/** How long `ccb acp` waits for its sessions to close after the client left. */
const CLOSE_BOUND_MS = 15_000;
