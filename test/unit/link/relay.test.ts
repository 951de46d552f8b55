import assert from "node:assert/strict";
import { once } from "node:events";
import { after, describe, it } from "node:test";
import type { Logger } from "../../../src/core/log.ts";
import { AgentProcess } from "../../../src/link/agent-process.ts";
import { type FrameSink, Relay } from "../../../src/link/relay.ts";

// A real agent process whose stdout ccb reads through a pipe: it writes exactly what the test asks for,
// one step per line on its stdin ("1", "2", ...), so the test decides where the pipe's chunks end.
const STEPS = [
  // an agent message over the cap, with no newline yet: the relay holds more than the cap
  `{"jsonrpc":"2.0","method":"big","params":{"pad":"${"x".repeat(3000)}`,
  // its tail (itself a well-formed JSON-RPC message), its newline, then a normal message
  '{"jsonrpc":"2.0","method":"tail/leak"}\n{"jsonrpc":"2.0","method":"next/line"}\n',
];
const AGENT = `
const steps = ${JSON.stringify(STEPS)};
let buf = "";
process.stdin.on("data", (d) => {
  buf += d;
  for (let nl = buf.indexOf("\\n"); nl !== -1; nl = buf.indexOf("\\n")) {
    const step = Number(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    process.stdout.write(steps[step - 1]);
  }
});
`;

function recordingLogger(warnings: string[]): Logger {
  const l: Logger = {
    debug() {},
    info() {},
    warn(m: string) {
      warnings.push(m);
    },
    error() {},
    child: () => l,
  };
  return l;
}

describe("link relay: the agent's stdout as NDJSON", () => {
  const agents: AgentProcess[] = [];
  after(() => {
    for (const a of agents) a.child.kill();
  });

  it("drops a line over the cap whole: its tail is not read as a message, and the next line is delivered", async () => {
    const warnings: string[] = [];
    const log = recordingLogger(warnings);
    const agent = new AgentProcess({ command: process.execPath, args: ["-e", AGENT] }, log);
    agents.push(agent);
    const frames: string[] = [];
    let delivered: () => void = () => {};
    const sink: FrameSink = {
      send(text, done) {
        frames.push(text);
        delivered();
        done();
      },
      bufferedAmount: 0,
      pause() {},
      resume() {},
    };
    new Relay({ agent, log, localMode: "default", maxMessageBytes: 1000, connectionId: "t" }, sink);

    // step 1: wait until every byte of the unfinished oversized line has reached ccb
    let received = 0;
    const first = Buffer.byteLength(STEPS[0] as string);
    const stepOneRead = new Promise<void>((resolve) => {
      agent.child.stdout.on("data", (d: Buffer) => {
        received += d.byteLength;
        if (received >= first) resolve();
      });
    });
    agent.child.stdin.write("1\n");
    await stepOneRead;
    assert.deepEqual(frames, [], "nothing of an unfinished line is delivered");

    const next = new Promise<void>((resolve) => {
      delivered = resolve;
    });
    agent.child.stdin.write("2\n");
    await next;
    assert.deepEqual(
      frames.map((f) => (JSON.parse(f) as { method: string }).method),
      ["next/line"],
      "the oversized line's tail is not a message; the next line is",
    );
    assert.equal(warnings.filter((w) => w.includes("over 1000 bytes")).length, 1, warnings.join("\n"));
    agent.child.stdin.end();
    await once(agent.child, "exit");
  });
});
