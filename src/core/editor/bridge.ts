import { type ExtensionMethod, extensionMethods, type ParamsOf, type ResultOf } from "../../editor-wire/contract.ts";
import { CcbError } from "../errors.ts";

/** The editor's methods as the bridge contract (editor/contract.ts) defines them: method -> params and result. */
export type EditorMethods = { [M in ExtensionMethod]: { params: ParamsOf<M>; result: ResultOf<M> } };
export type EditorMethod = keyof EditorMethods;

export interface EditorCallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * The live editor, as the core sees it. Implemented by the workbench's bridge server
 * (src/workbench) and, in a front end attached to another's workbench, the remote bridge; absent when
 * no workbench is attached. Params are typed by the contract; the answer is checked against the
 * contract once, where it comes off the wire (`checkAnswer`): by the bridge itself when it says so
 * (`checksAnswers`), else by `callEditor`, the one typed call.
 */
export interface EditorBridge {
  /** true: `call` answers only what it checked with `checkAnswer` as it came off its wire. */
  readonly checksAnswers?: boolean;
  call<M extends EditorMethod>(
    method: M,
    params: EditorMethods[M]["params"],
    options?: EditorCallOptions,
  ): Promise<unknown>;
  /** Subscribe to editor events (selection changes, diagnostics, ...). Returns an unsubscribe function. */
  onEvent(listener: (event: { type: string; [key: string]: unknown }) => void): () => void;
  /** An agent is at work: an editor window closed while idle starts reopening now, nobody waits for it. */
  touch?(): void;
}

/**
 * An editor's answer checked against the method's result schema, where it comes off a wire
 * (BRIDGE_ERROR when it does not match, e.g. an extension or a shared workbench of another ccb version).
 */
export function checkAnswer<M extends EditorMethod>(method: M, raw: unknown): EditorMethods[M]["result"] {
  const parsed = extensionMethods[method].result.safeParse(raw);
  if (!parsed.success) {
    throw new CcbError("BRIDGE_ERROR", `The editor answered ${method} with an unexpected shape.`, {
      hint: "The bridge extension and ccb may be different versions; restart ccb.",
    });
  }
  return parsed.data as EditorMethods[M]["result"];
}

/** The one typed call through an editor bridge: its answer checked once (by the bridge, or here when it does not). */
export async function callEditor<M extends EditorMethod>(
  bridge: EditorBridge,
  method: M,
  params: EditorMethods[M]["params"],
  options: EditorCallOptions = {},
): Promise<EditorMethods[M]["result"]> {
  const raw = await bridge.call(method, params, options);
  return bridge.checksAnswers ? (raw as EditorMethods[M]["result"]) : checkAnswer(method, raw);
}

/** The running workbench, when there is one (filled by src/workbench). The URL is host-only: `_meta`, never model-visible text. */
export interface WorkbenchInfo {
  /** Browser URL of the workbench, with a one-time token that a browser exchanges for the workbench cookie. */
  url: string;
  /** "openvscode" | "code-server". */
  runtime: string;
}

export interface BridgeStatus {
  connected: boolean;
  /** Why it is not connected, in words a user or model can act on. */
  reason: string;
}

/** The running workbench as its holder describes it: a URL function gives a fresh link per call. */
export interface WorkbenchSource {
  url: string | (() => string);
  runtime: string;
  /** A fresh one-time link that must be fetched (an attached front end asks the owner). */
  freshUrl?: () => Promise<string | undefined>;
}

/** The writes a BridgeSlot takes, from its current holder only (BridgeSlot.claim). */
export interface BridgeWriter {
  readonly holder: string;
  /** false once another holder claimed the slot: this writer's writes are then ignored. */
  readonly current: boolean;
  /** An extension host serves: tools call it. */
  set(bridge: EditorBridge): void;
  /** None serves: tools say `reason`. */
  clear(reason: string): void;
  /** The workbench the bridge belongs to (undefined when none runs). */
  setWorkbench(info: WorkbenchSource | undefined): void;
}

/**
 * A slot the workbench fills in when its extension connects. Tools ask it for the bridge and
 * get a BRIDGE_UNAVAILABLE error, with the reason, when there is none: never a fake success.
 */
export class BridgeSlot {
  #bridge: EditorBridge | undefined;
  #reason = "No workbench is running in this ccb process.";
  readonly #listeners = new Set<(status: BridgeStatus) => void>();
  #workbench: WorkbenchSource | undefined;
  #writer: BridgeWriter | undefined;

  /** The workbench the bridge belongs to (undefined when none runs); a URL function gives a fresh link per call. */
  workbench(): WorkbenchInfo | undefined {
    const w = this.#workbench;
    if (!w) return undefined;
    const url = w.url;
    // Lazy: a check that a workbench runs spends no one-time link (an attached front end holds one at a time).
    return {
      get url() {
        return typeof url === "function" ? url() : url;
      },
      runtime: w.runtime,
    };
  }

  /** A fresh one-time link, waiting for it when it must be fetched (an attached front end asks the owner). */
  async workbenchUrl(): Promise<string | undefined> {
    const w = this.#workbench;
    if (!w) return undefined;
    if (w.freshUrl) return w.freshUrl();
    return typeof w.url === "function" ? w.url() : w.url;
  }

  status(): BridgeStatus {
    return this.#bridge ? { connected: true, reason: "" } : { connected: false, reason: this.#reason };
  }

  /** Who may change the slot now (see claim). */
  get holder(): string | undefined {
    return this.#writer?.holder;
  }

  /**
   * The one right to change the slot: the connected bridge, the reason there is none and the
   * workbench it belongs to. Whoever holds the workbench for this core (the workbench lease of a
   * front end, the detached host) claims it; a new claim revokes the previous writer, whose late
   * writes (a channel that closed after a takeover, a workbench that was let go) change nothing.
   */
  claim(holder: string): BridgeWriter {
    const slot = this;
    const writer: BridgeWriter = {
      holder,
      get current() {
        return slot.#writer === writer;
      },
      set(bridge) {
        if (slot.#writer !== writer) return;
        slot.#bridge = bridge;
        slot.#emit();
      },
      clear(reason) {
        if (slot.#writer !== writer) return;
        slot.#bridge = undefined;
        slot.#reason = reason;
        slot.#emit();
      },
      setWorkbench(info) {
        if (slot.#writer !== writer) return;
        slot.#workbench = info;
      },
    };
    this.#writer = writer;
    return writer;
  }

  /** A typed call through the connected bridge (BRIDGE_UNAVAILABLE with the reason when there is none). */
  call<M extends EditorMethod>(
    method: M,
    params: EditorMethods[M]["params"],
    options?: EditorCallOptions,
  ): Promise<EditorMethods[M]["result"]> {
    return callEditor(this.require(), method, params, options);
  }

  /**
   * An agent is at work (a tool call of any kind, a prompt): a headless editor closed while idle
   * starts reopening, so the editor call that usually follows waits less. Never waits, never throws.
   */
  touch(): void {
    this.#bridge?.touch?.();
  }

  /** The connected bridge, or BRIDGE_UNAVAILABLE saying why. */
  require(): EditorBridge {
    if (!this.#bridge) {
      throw new CcbError("BRIDGE_UNAVAILABLE", `The live editor bridge is not connected: ${this.#reason}`, {
        hint: "File, search, terminal and git tools still work. Editor tools need a running workbench with a window open on it (a browser tab, or ccb's headless client).",
      });
    }
    return this.#bridge;
  }

  onChange(listener: (status: BridgeStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(): void {
    const s = this.status();
    for (const l of this.#listeners) l(s);
  }
}
