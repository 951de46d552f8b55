import type { TerminalManager } from "./manager.ts";
import type { CreateTerminalOptions, TerminalReadOptions, TerminalService } from "./types.ts";

/**
 * The core's terminals as tools see them: this process's TerminalManager (`local`), or, while this
 * front end is attached to a shared workbench, the owner's terminals (`use(remote)`), so every
 * front end on one workbench lists, reads and writes the same terminals the person sees in the
 * workbench's panel. The switch happens between calls; a terminal id belongs to the side that made it.
 */
export class TerminalSlot implements TerminalService {
  #remote: TerminalService | undefined;

  constructor(readonly local: TerminalManager) {}

  /** Relay to the shared workbench's terminals (undefined: back to this process's own). */
  use(remote: TerminalService | undefined): void {
    this.#remote = remote;
  }

  /** Back to this process's own terminals, if `remote` is still the one in use (a newer attachment may have replaced it). */
  release(remote: TerminalService): void {
    if (this.#remote === remote) this.#remote = undefined;
  }

  /** Whether the terminals are the shared workbench owner's. */
  get shared(): boolean {
    return this.#remote !== undefined;
  }

  get #current(): TerminalService {
    return this.#remote ?? this.local;
  }

  create(options: CreateTerminalOptions) {
    return this.#current.create(options);
  }
  list() {
    return this.#current.list();
  }
  get(id: string) {
    return this.#current.get(id);
  }
  read(id: string, options?: TerminalReadOptions) {
    return this.#current.read(id, options);
  }
  write(id: string, data: string) {
    return this.#current.write(id, data);
  }
  resize(id: string, cols: number, rows: number) {
    return this.#current.resize(id, cols, rows);
  }
  kill(id: string, signal?: string) {
    return this.#current.kill(id, signal);
  }
  remove(id: string) {
    return this.#current.remove(id);
  }
}
