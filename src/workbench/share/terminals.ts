import { z } from "zod";
import { CcbError } from "../../core/errors.ts";
import type { TerminalManager } from "../../core/terminals/manager.ts";
import {
  type CreateTerminalOptions,
  TERMINAL_LIMITS as L,
  type TerminalInfo,
  type TerminalReadOptions,
  type TerminalReadResult,
  type TerminalService,
} from "../../core/terminals/types.ts";

/**
 * Terminals over the attach channel: an attached front end's tools use the owner's terminals (the
 * ones the workbench's panel shows), so `ccb ide`, `ccb serve` and `ccb acp` on one workbench list,
 * read and write the same terminals. The owner validates every relayed call here (`serveTerminalCall`)
 * and runs it on its own TerminalManager; terminals an attached front end created are killed when it
 * leaves, as its own would be.
 */

const Id = z.string().min(1).max(100);

export const terminalMethods = {
  "terminals.create": {
    params: z.object({
      command: z.string().min(1).optional(),
      args: z.array(z.string()).max(L.maxArgs).optional(),
      cwd: z.string().min(1).optional(),
      env: z.record(z.string(), z.string()).optional(),
      cols: z.number().int().min(L.minCols).max(L.maxCols).optional(),
      rows: z.number().int().min(L.minRows).max(L.maxRows).optional(),
      title: z.string().max(L.maxTitle).optional(),
    }),
    timeoutMs: 30_000,
  },
  "terminals.list": { params: z.object({}), timeoutMs: 15_000 },
  "terminals.get": { params: z.object({ id: Id }), timeoutMs: 15_000 },
  "terminals.read": {
    params: z.object({
      id: Id,
      offset: z.number().int().min(0).optional(),
      scrollback: z.boolean().optional(),
      maxBytes: z.number().int().min(0).max(L.maxReadBytes).optional(),
      waitMs: z.number().int().min(0).max(L.maxWaitMs).optional(),
    }),
    timeoutMs: 15_000,
  },
  "terminals.write": { params: z.object({ id: Id, data: z.string() }), timeoutMs: 15_000 },
  "terminals.resize": {
    params: z.object({ id: Id, cols: z.number().int(), rows: z.number().int() }),
    timeoutMs: 15_000,
  },
  "terminals.kill": { params: z.object({ id: Id, signal: z.string().max(20).optional() }), timeoutMs: 30_000 },
  "terminals.remove": { params: z.object({ id: Id }), timeoutMs: 30_000 },
} as const;

export type TerminalMethod = keyof typeof terminalMethods;

export function isTerminalMethod(method: string): method is TerminalMethod {
  return Object.hasOwn(terminalMethods, method);
}

/** Sends one relayed call to the owner; the caller's signal cancels it there. */
export type RelayCall = (
  method: TerminalMethod,
  params: unknown,
  timeoutMs: number,
  signal?: AbortSignal,
) => Promise<unknown>;

/** The owner's terminals as an attached front end's tools see them. */
export class RemoteTerminals implements TerminalService {
  constructor(private readonly relay: RelayCall) {}

  #call<T>(method: TerminalMethod, params: object, signal?: AbortSignal, extraMs = 0): Promise<T> {
    return this.relay(method, params, terminalMethods[method].timeoutMs + extraMs, signal) as Promise<T>;
  }

  create(options: CreateTerminalOptions): Promise<TerminalInfo> {
    const { origin: _origin, ...rest } = options; // the owner marks relayed terminals as a tool's
    return this.#call("terminals.create", rest);
  }
  list(): Promise<TerminalInfo[]> {
    return this.#call("terminals.list", {});
  }
  get(id: string): Promise<TerminalInfo> {
    return this.#call("terminals.get", { id });
  }
  read(id: string, options: TerminalReadOptions = {}): Promise<TerminalReadResult> {
    const { signal, ...rest } = options;
    return this.#call("terminals.read", { id, ...rest }, signal, rest.waitMs ?? 0);
  }
  write(id: string, data: string): Promise<number> {
    return this.#call("terminals.write", { id, data });
  }
  async resize(id: string, cols: number, rows: number): Promise<void> {
    await this.#call("terminals.resize", { id, cols, rows });
  }
  kill(id: string, signal?: string): Promise<TerminalInfo> {
    return this.#call("terminals.kill", signal === undefined ? { id } : { id, signal });
  }
  remove(id: string): Promise<TerminalInfo> {
    return this.#call("terminals.remove", { id });
  }
}

type ParamsOf<M extends TerminalMethod> = z.infer<(typeof terminalMethods)[M]["params"]>;
type Handlers = {
  [M in TerminalMethod]: (t: TerminalManager, p: ParamsOf<M>, signal: AbortSignal, created: Set<string>) => unknown;
};

const handlers: Handlers = {
  async "terminals.create"(t, p, _signal, created) {
    const info = await t.create({ ...p, origin: "tool" });
    created.add(info.id);
    return info;
  },
  "terminals.list": (t) => t.list(),
  "terminals.get": (t, p) => t.get(p.id),
  "terminals.read": (t, { id, ...options }, signal) => t.read(id, { ...options, signal }),
  "terminals.write": (t, p) => t.write(p.id, p.data),
  "terminals.resize"(t, p) {
    t.resize(p.id, p.cols, p.rows);
    return {};
  },
  "terminals.kill": (t, p) => t.kill(p.id, p.signal),
  "terminals.remove"(t, p, _signal, created) {
    created.delete(p.id);
    return t.remove(p.id);
  },
};

/**
 * The owner's side of one relayed terminal call, validated at this edge. `created`: the ids this
 * attached front end made (killed when it leaves).
 */
export async function serveTerminalCall<M extends TerminalMethod>(
  terminals: TerminalManager,
  method: M,
  params: unknown,
  signal: AbortSignal,
  created: Set<string>,
): Promise<unknown> {
  const parsed = terminalMethods[method].params.safeParse(params);
  if (!parsed.success) throw new CcbError("INVALID_ARGUMENT", `Invalid params for ${method}.`);
  const handler = handlers[method] as (t: TerminalManager, p: unknown, s: AbortSignal, c: Set<string>) => unknown;
  return await handler(terminals, parsed.data, signal, created);
}

/** An attached front end left: kill the terminals it started (they stay listed, exited, for the others). */
export async function killCreated(terminals: TerminalManager, created: Set<string>): Promise<void> {
  await Promise.all(
    [...created].map(async (id) => {
      const info = terminals.list().find((t) => t.id === id);
      if (info?.running) await terminals.kill(id).catch(() => undefined);
    }),
  );
  created.clear();
}
