import { hostname, networkInterfaces } from "node:os";
import { hostForUrl, isLoopbackHost, isWildcardHost, LOOPBACK_NAMES } from "./loopback.ts";

/**
 * The Host headers a listener bound to `boundHost:port` answers (DNS-rebinding protection): the
 * loopback names with the port, the bound host with the port, and any extra `host[:port]` the
 * embedder allows (e.g. the host of a public URL). Exact matches only: `127.0.0.1.evil.com` is not
 * `127.0.0.1`.
 */
export class HostAllowList {
  readonly #allowed = new Set<string>();
  #port = 0;
  readonly #boundHost: string;
  readonly #extra: string[] = [];
  readonly #exact = new Set<string>();
  readonly #defaultPort: number;

  constructor(boundHost: string, tls: boolean) {
    this.#boundHost = boundHost;
    this.#defaultPort = tls ? 443 : 80;
  }

  /** Called once the port is known (port 0 binds a free one). */
  setPort(port: number): void {
    this.#port = port;
    this.#rebuild();
  }

  /** Also accept this `host` or `host:port` (lower-cased; without a port, the listener's port). */
  allow(hostOrAuthority: string): void {
    this.#extra.push(hostOrAuthority.toLowerCase());
    this.#rebuild();
  }

  /** Accept exactly this Host value, e.g. `ccb.example.com` as a proxy forwards it (no port: the public default). */
  allowExact(hostHeader: string): void {
    this.#exact.add(hostHeader.toLowerCase());
  }

  /**
   * For a listener bound to a non-loopback address: also accept this machine's host name and the
   * addresses of its interfaces (a rebinding attack names a foreign domain, never these).
   */
  allowMachineNames(): void {
    if (isLoopbackHost(this.#boundHost)) return;
    const names = new Set<string>([hostname().toLowerCase()]);
    for (const list of Object.values(networkInterfaces()))
      for (const a of list ?? []) names.add(hostForUrl(a.address.split("%")[0] as string).toLowerCase());
    for (const n of names) this.#extra.push(n);
    this.#rebuild();
  }

  #rebuild(): void {
    this.#allowed.clear();
    const names = [...LOOPBACK_NAMES.map(hostForUrl), hostForUrl(this.#boundHost).toLowerCase()];
    for (const n of names) {
      if (isWildcardHost(n)) continue;
      this.#allowed.add(`${n}:${this.#port}`);
    }
    for (const e of this.#extra) this.#allowed.add(hasPort(e) ? e : `${e}:${this.#port}`);
  }

  /** Whether a Host header value is acceptable. A missing Host is not. */
  check(hostHeader: string | undefined): boolean {
    if (!hostHeader) return false;
    const h = hostHeader.trim().toLowerCase();
    if (this.#exact.has(h)) return true;
    const authority = hasPort(h) ? h : `${h}:${this.#defaultPort}`;
    return this.#allowed.has(authority);
  }

  /** The allowed authorities (`host:port`), e.g. for same-origin checks. */
  authorities(): string[] {
    return [...this.#allowed, ...this.#exact];
  }
}

function hasPort(authority: string): boolean {
  return /:\d+$/.test(authority) && !/^\[[^\]]*\]$/.test(authority);
}
