import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { ONE_TIME_QUERY } from "../../src/net/browser-session.ts";
import type { TokenPlace } from "../../src/net/credentials.ts";
import type { Gateway, RouteDescription } from "../../src/net/gateway.ts";

/**
 * The edge test matrix, generated from the policies the listeners declare (Gateway.routes()):
 * for every route, a positive control and the attacks that its policy must stop.
 */

export interface Probe {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  upgrade: boolean;
}

/** `refused`: the status (or one of them) an edge refusal answers with. */
export type Expect = { refused: number | readonly number[] } | { passes: true } | { frameClose: 1009 };

export interface MatrixCase {
  listener: string;
  route: string;
  name: string;
  probe: Probe;
  expect: Expect;
}

export interface ListenerUnderTest {
  name: string;
  gateway: Gateway;
  /** The body of a valid request to an HTTP route that reads one. */
  body?: (route: RouteDescription) => string | undefined;
  /** The path to request under a prefix (default: the prefix, or `${prefix}/x` under /ide/). */
  path?: (route: RouteDescription) => string;
  /** Extra headers every request to this route needs (e.g. MCP's Accept). */
  headers?: (route: RouteDescription) => Record<string, string>;
  /** Upgrade routes whose frame cap is exercised elsewhere (their handler has nothing to connect to here). */
  noFrames?: readonly string[];
  /** A valid OAuth access token for a route whose policy has an OAuth credential (from a real authorization server). */
  accessToken?: (route: RouteDescription) => Promise<string>;
}

const HOSTILE_HOSTS = (port: number) => [
  `127.0.0.1.evil.com:${port}`,
  "evil.com",
  `evil.com:${port}`,
  `localhost.evil.com:${port}`,
  `127.0.0.1:${port + 1}`,
];

/** A valid credential for a route, or undefined when the route is open. */
export async function validCredential(
  l: ListenerUnderTest,
  route: RouteDescription,
): Promise<{ place: TokenPlace; value: string } | undefined> {
  const p = route.policy;
  if (p.oauth && l.accessToken) return { place: { in: "bearer" }, value: await l.accessToken(route) };
  for (const c of p.auth) {
    const v = c.expected();
    if (v !== undefined && c.places[0]) return { place: c.places[0], value: v };
  }
  if (p.session) {
    const session = p.session;
    const res = await send(l.gateway.port, {
      method: "GET",
      path: `${route.prefix}/?${ONE_TIME_QUERY}=${session.mint()}`,
      headers: { host: `127.0.0.1:${l.gateway.port}` },
      upgrade: false,
    });
    const cookie = (res.setCookie[0] ?? "").split(";")[0] ?? "";
    return { place: { in: "cookie", name: session.cookieName }, value: cookie.slice(cookie.indexOf("=") + 1) };
  }
  return undefined;
}

export function decorate(probe: Probe, place: TokenPlace, value: string): Probe {
  const headers = { ...probe.headers };
  let path = probe.path;
  switch (place.in) {
    case "bearer":
      headers.authorization = `Bearer ${value}`;
      break;
    case "header":
      headers[place.name.toLowerCase()] = value;
      break;
    case "subprotocol":
      headers["sec-websocket-protocol"] = [
        headers["sec-websocket-protocol"],
        `${place.prefix}${Buffer.from(value).toString("base64url")}`,
      ]
        .filter(Boolean)
        .join(", ");
      break;
    case "query":
      path += `${path.includes("?") ? "&" : "?"}${place.name}=${encodeURIComponent(value)}`;
      break;
    case "cookie":
      headers.cookie = `${place.name}=${value}`;
      break;
  }
  return { ...probe, headers, path };
}

/**
 * The token with one character changed, same length. Not the last one: in base64url (a JWT's
 * signature) the last character carries unused bits, so changing it can leave the decoded bytes,
 * and the signature, as they were (a valid token again: this case once passed a real one).
 */
function wrong(value: string): string {
  const i = value.length - 2;
  const c = value[i] === "A" ? "B" : "A";
  return `${value.slice(0, i)}${c}${value.slice(i + 1)}`;
}

export async function generate(l: ListenerUnderTest): Promise<MatrixCase[]> {
  const port = l.gateway.port;
  const out: MatrixCase[] = [];
  for (const route of l.gateway.routes()) {
    const p = route.policy;
    const method = route.method === "*" ? (p.maxBodyBytes ? "POST" : "GET") : route.method;
    const path = l.path?.(route) ?? (route.prefix.startsWith("/ide/") ? `${route.prefix}/x` : route.prefix);
    const body = method === "POST" ? l.body?.(route) : undefined;
    const base: Probe = {
      method,
      path,
      headers: {
        host: `127.0.0.1:${port}`,
        ...(l.headers?.(route) ?? {}),
        ...(p.subprotocol ? { "sec-websocket-protocol": p.subprotocol } : {}),
      },
      upgrade: route.kind === "upgrade",
      ...(body !== undefined ? { body } : {}),
    };
    const cred = await validCredential(l, route);
    const good = cred ? decorate(base, cred.place, cred.value) : base;
    const add = (name: string, probe: Probe, expect: Expect) =>
      out.push({
        listener: l.name,
        route: `${route.kind} ${method} ${route.prefix.replace(/\/ide\/[^/]+/, "/ide/<key>")} [${p.name}]`,
        name,
        probe,
        expect,
      });

    add("positive control: own Host, no Origin, the right credential", good, { passes: true });
    add(
      "positive control: localhost name",
      { ...good, headers: { ...good.headers, host: `localhost:${port}` } },
      { passes: true },
    );
    for (const host of HOSTILE_HOSTS(port))
      add(`hostile Host ${host}`, { ...good, headers: { ...good.headers, host } }, { refused: 403 });
    // Node's HTTP parser answers a request without Host with 400 itself; an upgrade reaches the edge (403).
    add("no Host", { ...good, headers: { ...good.headers, host: "" } }, { refused: [400, 403] });
    if (p.origin.kind === "any")
      add(
        "Origin http://evil.com (any origin, token-gated)",
        { ...good, headers: { ...good.headers, origin: "http://evil.com" } },
        { passes: true },
      );
    else
      add(
        "Origin http://evil.com",
        { ...good, headers: { ...good.headers, origin: "http://evil.com" } },
        { refused: 403 },
      );
    add(
      "Origin null",
      { ...good, headers: { ...good.headers, origin: "null" } },
      p.origin.kind === "any" ? { passes: true } : { refused: 403 },
    );
    if (cred) {
      add("no credential", base, { refused: 401 });
      const places = [
        ...p.auth.flatMap((c) => (c.expected() !== undefined ? c.places : [])),
        ...(p.session ? [p.session.credential.places[0] as TokenPlace] : []),
        ...(p.oauth ? [{ in: "bearer" } as TokenPlace] : []),
      ];
      for (const place of places)
        add(
          `wrong token in ${place.in}${"name" in place ? ` ${place.name}` : ""}`,
          decorate(base, place, wrong(cred.value)),
          { refused: 401 },
        );
      for (const place of places)
        add(`other-length token in ${place.in}`, decorate(base, place, `${cred.value}x`), { refused: 401 });
    }
    for (const key of p.refuseQueryKeys ?? [])
      add(`token in the query (?${key}=)`, decorate(good, { in: "query", name: key }, cred?.value ?? "x"), {
        refused: 400,
      });
    if (p.subprotocol)
      add(
        `no ${p.subprotocol} subprotocol`,
        {
          ...good,
          headers: {
            ...good.headers,
            "sec-websocket-protocol":
              (good.headers["sec-websocket-protocol"] ?? "").replace(/(^|, )mcp(,|$)/, "$1").replace(/^, |, $/g, "") ||
              "other",
          },
        },
        { refused: 400 },
      );
    if (p.maxBodyBytes && method === "POST")
      add(
        `body over ${p.maxBodyBytes} bytes`,
        { ...good, body: Buffer.alloc(p.maxBodyBytes + 1, 0x20) },
        { refused: 413 },
      );
    if (p.maxFrameBytes && route.kind === "upgrade" && !l.noFrames?.includes(route.prefix))
      add(`a frame over ${p.maxFrameBytes} bytes`, good, { frameClose: 1009 });
  }
  return out;
}

export interface Answer {
  status: number;
  setCookie: string[];
  body: string;
}

/** One HTTP request or upgrade attempt with exactly these headers; 101 for an accepted upgrade. */
export function send(port: number, probe: Probe): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...probe.headers };
    if (headers.host === "") delete headers.host;
    if (probe.upgrade)
      Object.assign(headers, {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": randomBytes(16).toString("base64"),
      });
    const req = request({ host: "127.0.0.1", port, method: probe.method, path: probe.path, headers, setHost: false });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, setCookie: [], body: "" });
    });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d.length < 2000 ? d : ""));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          setCookie: (res.headers["set-cookie"] as string[] | undefined) ?? [],
          body,
        }),
      );
      res.on("error", () => resolve({ status: res.statusCode ?? 0, setCookie: [], body }));
    });
    req.on("error", reject);
    req.end(probe.body);
  });
}

/**
 * Upgrade with the probe's headers, then announce one masked text frame of `maxBytes + 1` bytes
 * (the header plus a first chunk, as a client streaming a huge message would); resolves with the
 * close code the server answers with (-1 when the upgrade was refused).
 */
export function oversizeFrame(port: number, probe: Probe, maxBytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      ...probe.headers,
      connection: "Upgrade",
      upgrade: "websocket",
      "sec-websocket-version": "13",
      "sec-websocket-key": randomBytes(16).toString("base64"),
    };
    const req = request({ host: "127.0.0.1", port, method: "GET", path: probe.path, headers, setHost: false });
    req.on("response", (res) => {
      res.resume();
      resolve(-1);
    });
    req.on("upgrade", (_res, socket) => {
      const len = BigInt(maxBytes + 1);
      const header = Buffer.alloc(14);
      header[0] = 0x81; // FIN, text
      header[1] = 0x80 | 127; // masked, 64-bit length
      header.writeBigUInt64BE(len, 2);
      randomBytes(4).copy(header, 10);
      socket.write(Buffer.concat([header, randomBytes(1024)]));
      let buf = Buffer.alloc(0);
      socket.on("data", (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        // Server frames (unmasked): skip data frames (7-, 16- or 64-bit lengths) until the close frame, whose payload starts with the 2-byte code.
        let i = 0;
        while (i + 2 <= buf.length) {
          const opcode = (buf[i] as number) & 0x0f;
          let plen = (buf[i + 1] as number) & 0x7f;
          let hdr = 2;
          if (plen === 126) {
            if (i + 4 > buf.length) return;
            plen = buf.readUInt16BE(i + 2);
            hdr = 4;
          } else if (plen === 127) {
            if (i + 10 > buf.length) return;
            plen = Number(buf.readBigUInt64BE(i + 2));
            hdr = 10;
          }
          if (opcode === 0x8) {
            if (i + hdr + 2 > buf.length) return;
            socket.destroy();
            return resolve(buf.readUInt16BE(i + hdr));
          }
          if (i + hdr + plen > buf.length) return;
          i += hdr + plen;
        }
      });
      socket.on("error", () => undefined);
      socket.on("close", () => resolve(-2));
    });
    req.on("error", reject);
    req.end();
  });
}
