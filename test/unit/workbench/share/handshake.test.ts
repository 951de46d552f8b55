import assert from "node:assert/strict";
import { once } from "node:events";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import { type Core, createCore } from "../../../../src/core/core.ts";
import { silentLogger } from "../../../../src/core/log.ts";
import { ClientHandshake, HostHandshake } from "../../../../src/workbench/share/handshake.ts";
import { type HeldWorkbench, startOwner } from "../../../../src/workbench/share/owner.ts";
import { ServerFrame } from "../../../../src/workbench/share/protocol.ts";
import { ATTACH_PATH, readRecord, type ShareRecord, shareKey } from "../../../../src/workbench/share/record.ts";
import { RemoteBridge } from "../../../../src/workbench/share/remote.ts";
import { fetchStatus, shareLink } from "../../../../src/workbench/share/status.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

describe("the attach handshake (pure): each side proves the secret, the host first, the secret never travels", () => {
  const secret = "k".repeat(43);
  const gw = "http://127.0.0.1:41000";
  const client = () => new ClientHandshake(secret, gw, { frontEnd: "ide", pid: 4242, purpose: "attach" });

  it("the right host and the right client open the channel; no frame carries the secret", () => {
    const c = client();
    const h = new HostHandshake(secret, gw);
    const hello = c.hello();
    assert.equal(hello.type, "hello");
    const challenge = h.challenge((hello as { nonce: string }).nonce);
    const step = c.step(challenge);
    assert.ok(typeof step === "object" && step.send.type === "prove");
    assert.equal(h.verify((step.send as { proof: string }).proof), true);
    assert.equal(c.step({ type: "welcome" }), "welcomed");
    assert.equal(c.done, true);
    for (const f of [hello, challenge, step.send]) assert.ok(!JSON.stringify(f).includes(secret), JSON.stringify(f));
  });

  it("a host that does not know the secret gets no proof from the client (refused at its challenge)", () => {
    for (const forged of [
      new HostHandshake("x".repeat(43), gw), // another secret
      new HostHandshake(secret, "http://127.0.0.1:41001"), // the right secret, another gateway: a relayed answer
    ]) {
      const c = client();
      const challenge = forged.challenge((c.hello() as { nonce: string }).nonce);
      assert.equal(c.step(challenge), "refused");
      assert.equal(c.done, false);
    }
    // a welcome before any challenge, or a state frame, does not open it either
    assert.equal(client().step({ type: "welcome" }), "refused");
    assert.equal(client().step({ type: "state", connected: true, reason: "", ready: true }), "refused");
  });

  it("a client that does not know the secret is refused by the host; the host's own proof is not a client proof", () => {
    const h = new HostHandshake(secret, gw);
    const challenge = h.challenge("n".repeat(32)) as { proof: string };
    assert.equal(h.verify(challenge.proof), false, "the host's answer replayed as the client's");
    const other = new ClientHandshake("y".repeat(43), gw, { frontEnd: "ide", pid: 1, purpose: "attach" });
    const h2 = new HostHandshake(secret, gw);
    const c2 = h2.challenge((other.hello() as { nonce: string }).nonce);
    assert.equal(other.step(c2), "refused", "the impostor client cannot check the host either");
    assert.equal(h2.verify("A".repeat(43)), false);
    assert.equal(new HostHandshake(secret, gw).verify("A".repeat(43)), false, "no challenge yet");
  });
});

describe("the attach channel against a real owner and a listener that does not know the secret", () => {
  const ws = tmpdirFixture({ prefix: "ccb-hs-ws-" });
  const state = tmpdirFixture({ prefix: "ccb-hs-state-" });
  const env = { ...process.env, XDG_STATE_HOME: state.path };
  let core: Core;
  let owner: HeldWorkbench;
  let record: ShareRecord;
  before(async () => {
    core = createCore({ roots: [ws.path], log: silentLogger });
    owner = await startOwner(
      {
        core,
        editor: core.claimEditor("the workbench host"),
        log: silentLogger,
        owner: "host",
        startedBy: "ide",
        // no runtime at this root: the workbench is unavailable, the channel works the same
        options: { runtime: "openvscode", runtimeRoot: join(ws.path, "no-runtime"), headlessClient: false },
        env,
      },
      shareKey([ws.path]),
    );
    record = (await readRecord(shareKey([ws.path]), env)) as ShareRecord;
    assert.ok(record);
  });
  after(async () => {
    await owner?.close();
    await core?.dispose();
    ws.cleanup();
    state.cleanup();
  });

  /** A listener that records everything it is told and plays the host as well as it can without the secret. */
  async function impostor(
    answer: (hello: { nonce: string }, sock: WebSocket) => void | Promise<void>,
  ): Promise<{ url: string; heard: string[]; headers: IncomingHttpHeaders[]; close(): Promise<void> }> {
    const heard: string[] = [];
    const headers: IncomingHttpHeaders[] = [];
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    wss.on("connection", (sock, req) => {
      headers.push(req.headers);
      heard.push(`${req.method} ${req.url}`);
      sock.on("message", (d: RawData) => {
        heard.push(String(d));
        const f = JSON.parse(String(d)) as { type: string; nonce: string };
        if (f.type === "hello") void answer(f, sock);
      });
    });
    await once(wss, "listening");
    return {
      url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`,
      heard,
      headers,
      close: () => new Promise((r) => wss.close(() => r())),
    };
  }

  it("positive control: a front end attaches to the real owner, and asks it for its status and a link", async () => {
    const c = createCore({ roots: [ws.path], log: silentLogger });
    const remote = await RemoteBridge.connect(record, {
      editor: c.claimEditor("t"),
      log: silentLogger,
      frontEnd: "ide",
    });
    await remote.firstState;
    assert.ok(remote.open, "the real owner proved itself and accepted the front end's proof");
    const s = await fetchStatus(record);
    assert.deepEqual(
      s?.attached.map((a) => a.frontEnd),
      ["ide"],
      "a status query is no attached front end",
    );
    await assert.rejects(shareLink([ws.path], env), /not running yet/, "the link query reached the owner");
    await remote.close();
    await c.dispose();
  });

  it("an impostor that cannot prove the secret gets a nonce and a pid, never the secret nor a proof; the front end drops it", async () => {
    const forging = await impostor((_hello, sock) => {
      sock.send(JSON.stringify({ type: "challenge", nonce: "n".repeat(32), proof: "A".repeat(43) }));
      sock.send(JSON.stringify({ type: "welcome" }));
      sock.send(JSON.stringify({ type: "state", connected: true, reason: "", ready: true, runtime: "code-server" }));
    });
    const silent = await impostor(() => undefined); // accepts and says nothing
    // Relays the front end's hello to the real owner and its challenge back: the right secret's
    // proof, but for the real owner's gateway, not the one the front end dialled.
    const relay = await impostor(async (hello, sock) => {
      const up = new WebSocket(`${record.gatewayUrl.replace(/^http/, "ws")}${ATTACH_PATH}`);
      await once(up, "open");
      up.on("message", (d) => sock.send(String(d)));
      sock.on("message", (d) => up.send(String(d)));
      up.send(JSON.stringify(hello));
    });
    try {
      for (const [name, imp] of [
        ["forging", forging],
        ["silent", silent],
        ["relay", relay],
      ] as const) {
        const c = createCore({ roots: [ws.path], log: silentLogger });
        const fake: ShareRecord = { ...record, gatewayUrl: imp.url };
        const remote = await RemoteBridge.connect(fake, {
          editor: c.claimEditor("t"),
          log: silentLogger,
          frontEnd: "ide",
        });
        await remote.firstState;
        assert.equal(remote.open, false, `${name}: not attached`);
        assert.equal(c.bridge.status().connected, false, `${name}: nothing it said counted`);
        assert.equal(await fetchStatus(fake, 2000), undefined, `${name}: a status query gets nothing either`);
        await c.dispose();
        const all = `${JSON.stringify(imp.headers)}\n${imp.heard.join("\n")}`;
        assert.ok(imp.heard.length > 0, `${name}: positive control: the impostor was reached`);
        assert.ok(!all.includes(record.secret), `${name}: the secret never reached it`);
        assert.doesNotMatch(all, /authorization/i, `${name}: no credential header`);
        const types = imp.heard.filter((h) => h.startsWith("{")).map((h) => (JSON.parse(h) as { type: string }).type);
        assert.deepEqual([...new Set(types)], ["hello"], `${name}: nothing but hellos: ${types.join(",")}`);
      }
    } finally {
      await forging.close();
      await silent.close();
      await relay.close();
    }
  });

  it("the owner serves nothing to a client that does not prove the secret (no welcome, no state, 4401)", async () => {
    const url = `${record.gatewayUrl.replace(/^http/, "ws")}${ATTACH_PATH}`;
    const talk = async (frames: (challenge: ServerFrame | undefined) => object[]) => {
      const sock = new WebSocket(url);
      const got: ServerFrame[] = [];
      await once(sock, "open");
      const closed = once(sock, "close") as Promise<[number, Buffer]>;
      sock.on("message", (d) => {
        const f = ServerFrame.parse(JSON.parse(String(d)));
        got.push(f);
        if (f.type === "challenge") for (const x of frames(f).slice(1)) sock.send(JSON.stringify(x));
      });
      const [first] = frames(undefined);
      sock.send(JSON.stringify(first));
      const [code] = await closed;
      return { code, types: got.map((f) => f.type) };
    };
    const hello = { type: "hello", frontEnd: "ide", pid: 77, nonce: "c".repeat(32) };
    const wrong = await talk(() => [hello, { type: "prove", proof: "A".repeat(43) }]);
    assert.deepEqual(wrong, { code: 4401, types: ["challenge"] });
    const replayed = await talk((ch) => [hello, { type: "prove", proof: (ch as { proof?: string })?.proof ?? "" }]);
    assert.deepEqual(replayed, { code: 4401, types: ["challenge"] }, "the host's own proof sent back");
    const skipping = await talk(() => [hello, { type: "link", id: 1 }]);
    assert.deepEqual(skipping, { code: 4400, types: ["challenge"] }, "asking before proving");
    const noHello = await talk(() => [{ type: "status", id: 1 }]);
    assert.deepEqual(noHello, { code: 4400, types: [] });
    const s = await fetchStatus(record);
    assert.deepEqual(s?.attached, [], "none of them counted as attached");
  });
});
