import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { isCcbError } from "../../../../src/core/errors.ts";
import { silentLogger } from "../../../../src/core/log.ts";
import { OutputRing } from "../../../../src/core/terminals/buffer.ts";
import { TerminalManager } from "../../../../src/core/terminals/manager.ts";
import { isAlive } from "../../../../src/core/terminals/process-tree.ts";
import type { TerminalEvent } from "../../../../src/core/terminals/types.ts";
import { Workspace } from "../../../../src/core/workspace.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/** Collect a terminal's raw output through offsets until `pattern` appears (or it exits, or the timeout passes). */
async function waitForOutput(m: TerminalManager, id: string, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let offset = 0;
  let seen = "";
  for (;;) {
    const r = await m.read(id, { offset, waitMs: 1000 });
    seen += r.output;
    offset = r.nextOffset;
    if (pattern.test(seen)) return seen;
    if (!r.info.running && r.nextOffset === r.end)
      throw new Error(`terminal exited before ${pattern}: ${JSON.stringify(seen.slice(-500))}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}: ${JSON.stringify(seen.slice(-500))}`);
  }
}

async function rejectsWithCode(p: Promise<unknown> | (() => unknown), code: string): Promise<void> {
  await assert.rejects(
    async () => (typeof p === "function" ? p() : p),
    (err: unknown) => {
      assert.ok(isCcbError(err), `expected a CcbError, got ${String(err)}`);
      assert.equal(err.code, code, err.message);
      return true;
    },
  );
}

/** `seq 1 200000` output length: digits plus one line ending per line (`\r\n` through a PTY). */
function seqLength(n: number, eol: number): number {
  let total = 0;
  for (let i = 1; i <= n; i++) total += String(i).length + eol;
  return total;
}

describe("OutputRing", () => {
  it("reads by offset, keeps only its capacity and reports what was dropped", () => {
    const ring = new OutputRing(10);
    ring.append("abcdef");
    assert.deepEqual(ring.read(0), { data: "abcdef", from: 0, nextOffset: 6, dropped: false });
    ring.append("ghijkl");
    assert.equal(ring.end, 12);
    assert.equal(ring.start, 2);
    assert.deepEqual(ring.read(0), { data: "cdefghijkl", from: 2, nextOffset: 12, dropped: true });
    assert.deepEqual(ring.read(5, 3), { data: "fgh", from: 5, nextOffset: 8, dropped: false });
    assert.deepEqual(ring.read(12), { data: "", from: 12, nextOffset: 12, dropped: false });
    assert.deepEqual(ring.read(99), { data: "", from: 12, nextOffset: 12, dropped: false });
    ring.append("0123456789XYZ");
    assert.deepEqual(ring.read(12), { data: "3456789XYZ", from: 15, nextOffset: 25, dropped: true });
  });

  it("matches a model string for any sequence of appends and reads", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.string({ maxLength: 30 }), { maxLength: 30 }),
        fc.nat({ max: 400 }),
        fc.nat({ max: 60 }),
        (capacity, chunks, offset, max) => {
          const ring = new OutputRing(capacity);
          let all = "";
          for (const c of chunks) {
            ring.append(c);
            all += c;
          }
          const start = Math.max(0, all.length - capacity);
          const requested = Math.min(offset, all.length);
          const from = Math.max(requested, start);
          const r = ring.read(offset, max);
          assert.equal(r.from, from);
          assert.equal(r.dropped, from > requested);
          assert.equal(r.data, all.slice(from, from + max));
          assert.equal(r.nextOffset, from + r.data.length);
          assert.equal(ring.end, all.length);
        },
      ),
    );
  });
});

describe("terminal backend selection", () => {
  it("uses node-pty under Node and honours CCB_PTY_BACKEND", async () => {
    await using dir = tmpdirFixture();
    const ws = new Workspace([dir.path]);
    assert.equal((await new TerminalManager(ws, silentLogger).backend()).kind, "node-pty");
    const saved = process.env.CCB_PTY_BACKEND;
    try {
      process.env.CCB_PTY_BACKEND = "pipe";
      const b = await new TerminalManager(ws, silentLogger).backend();
      assert.equal(b.kind, "pipe");
      assert.equal(b.isPty, false);
      process.env.CCB_PTY_BACKEND = "tmux";
      await rejectsWithCode(new TerminalManager(ws, silentLogger).backend(), "CONFIG_INVALID");
      // Bun's terminal does not exist under Node: asking for it is a clear error, not a silent pipe.
      process.env.CCB_PTY_BACKEND = "bun";
      await rejectsWithCode(new TerminalManager(ws, silentLogger).backend(), "UNSUPPORTED");
    } finally {
      if (saved === undefined) delete process.env.CCB_PTY_BACKEND;
      else process.env.CCB_PTY_BACKEND = saved;
    }
  });
});

for (const backend of ["node-pty", "pipe"] as const) {
  const isPty = backend !== "pipe";
  const eol = isPty ? 2 : 1;

  describe(`terminals (${backend} backend)`, () => {
    let dir: ReturnType<typeof tmpdirFixture>;
    let outside: ReturnType<typeof tmpdirFixture>;
    let m: TerminalManager;

    before(() => {
      dir = tmpdirFixture();
      outside = tmpdirFixture();
      mkdirSync(join(dir.path, "sub"));
      writeFileSync(join(dir.path, "file.txt"), "x");
      symlinkSync(outside.path, join(dir.path, "escape"));
      m = new TerminalManager(new Workspace([dir.path]), silentLogger, { backend, killGraceMs: 1000 });
    });
    after(async () => {
      await m.dispose();
      dir.cleanup();
      outside.cleanup();
    });

    it("runs a shell and round-trips an echo", async () => {
      const t = await m.create({ cols: 100, rows: 30 });
      assert.equal(t.backend, backend);
      assert.equal(t.isPty, isPty);
      assert.equal(t.running, true);
      assert.equal(t.cwd, dir.path);
      assert.ok(typeof t.pid === "number" && isAlive(t.pid));
      m.write(t.id, "echo ccb-$((40+2))\n");
      await waitForOutput(m, t.id, /ccb-42/, 90_000); // the default shell reads ~/.bashrc: slow here
      const r = await m.read(t.id);
      assert.match(r.screen, /^ccb-42$/m);
      assert.ok(m.list().some((x) => x.id === t.id && x.running));
      await m.kill(t.id);
    });

    it("delivers all of `seq 1 200000` and reads a bounded buffer incrementally", async () => {
      const expected = seqLength(200_000, eol);
      const small = new TerminalManager(new Workspace([dir.path]), silentLogger, { backend, bufferSize: 64 * 1024 });
      try {
        const chunks: string[] = [];
        small.onEvent((e) => {
          if (e.type === "data" && e.data) chunks.push(e.data);
        });
        const t = await small.create({ command: "seq", args: ["1", "200000"] });
        const done = await small.waitForExit(t.id);
        assert.equal(done.exitCode, 0);
        const all = chunks.join("");
        assert.equal(all.length, expected);
        const lines = all.split(isPty ? "\r\n" : "\n");
        assert.equal(lines.pop(), "");
        assert.equal(lines.length, 200_000);
        for (const [i, line] of lines.entries()) assert.equal(line, String(i + 1));

        // Read everything still held, 10,000 characters at a time, from offset 0.
        let r = await small.read(t.id, { offset: 0, maxBytes: 10_000 });
        assert.equal(r.dropped, true);
        assert.equal(r.end, expected);
        assert.equal(r.from, expected - 64 * 1024);
        let tail = r.output;
        while (r.nextOffset < r.end) {
          const next = await small.read(t.id, { offset: r.nextOffset, maxBytes: 10_000 });
          assert.equal(next.dropped, false);
          assert.equal(next.from, r.nextOffset);
          tail += next.output;
          r = next;
        }
        assert.equal(r.nextOffset, expected);
        assert.equal(tail, all.slice(expected - 64 * 1024));
        assert.ok(tail.endsWith(isPty ? "199999\r\n200000\r\n" : "199999\n200000\n"));
        // The rendered screen shows the end of the output.
        assert.match((await small.read(t.id)).screen, /200000$/);
      } finally {
        await small.dispose();
      }
    });

    it("keeps the tail of the output when the event loop is busy as the child exits", async () => {
      // A loop blocked in 100 ms slices: timers then run before I/O, which is when node-pty's
      // close timer used to destroy the PTY socket with output still unread.
      const busy = setInterval(() => {
        const until = Date.now() + 100;
        while (Date.now() < until);
      }, 20);
      try {
        const t = await m.create({ command: "seq", args: ["1", "20000"] });
        await m.waitForExit(t.id);
        const r = await m.read(t.id, { offset: 0 });
        assert.equal(r.end, seqLength(20_000, eol));
        assert.ok(r.output.endsWith(isPty ? "19999\r\n20000\r\n" : "19999\n20000\n"));
      } finally {
        clearInterval(busy);
      }
    });

    if (isPty) {
      it("resizes the PTY and the screen (visible to `stty size`)", async () => {
        const events: TerminalEvent[] = [];
        const off = m.onEvent((e) => events.push(e));
        const t = await m.create({ command: "bash", args: ["--norc", "--noprofile"], cols: 100, rows: 30 });
        m.resize(t.id, 91, 27);
        m.write(t.id, "stty size\n");
        await waitForOutput(m, t.id, /^27 91\r?$/m);
        const info = m.list().find((x) => x.id === t.id);
        assert.equal(info?.cols, 91);
        assert.equal(info?.rows, 27);
        assert.ok(events.some((e) => e.type === "resize" && e.id === t.id));
        off();
        await m.kill(t.id);
      });
    } else {
      it("refuses to resize and says it is a pipe", async () => {
        const t = await m.create({ command: "cat" });
        await rejectsWithCode(() => m.resize(t.id, 91, 27), "UNSUPPORTED");
        m.write(t.id, "still-alive\n");
        await waitForOutput(m, t.id, /still-alive/);
        await m.kill(t.id);
      });
    }

    it("reports exit code 7 and refuses writes afterwards", async () => {
      const events: TerminalEvent[] = [];
      const off = m.onEvent((e) => e.type !== "data" && events.push(e));
      const t = await m.create({ command: "bash", args: ["--norc", "--noprofile", "-c", "echo bye; exit 7"] });
      const done = await m.waitForExit(t.id);
      off();
      assert.equal(done.running, false);
      assert.equal(done.exitCode, 7);
      assert.equal(done.signal, null);
      assert.match((await m.read(t.id)).output, /bye/);
      assert.deepEqual(
        events.filter((e) => e.id === t.id).map((e) => e.type),
        ["created", "exit"],
      );
      await rejectsWithCode(() => m.write(t.id, "echo\n"), "TERMINAL_EXITED");
    });

    it("kills the whole session, background jobs included, and reports the signal", async () => {
      const t = await m.create({ command: "bash", args: ["--norc", "--noprofile"] });
      m.write(t.id, "sleep 1000 & echo bg=$!\n");
      const seen = await waitForOutput(m, t.id, /bg=(\d+)/);
      const bg = Number(/bg=(\d+)/.exec(seen)?.[1]);
      assert.ok(isAlive(bg));
      const info = await m.kill(t.id);
      assert.equal(info.running, false);
      assert.equal(info.exitCode, null);
      assert.ok(info.signal === "SIGTERM" || info.signal === "SIGKILL", String(info.signal));
      assert.equal(isAlive(t.pid as number), false);
      assert.equal(isAlive(bg), false);

      const sleeper = await m.create({ command: "sleep", args: ["1000"] });
      const killed = await m.kill(sleeper.id, "SIGINT");
      assert.equal(killed.signal, "SIGINT");
      await rejectsWithCode(m.kill(sleeper.id, "SIGNOPE"), "INVALID_ARGUMENT");
    });

    it("confines the cwd to the workspace", async () => {
      const t = await m.create({ command: "pwd", cwd: "sub" });
      await m.waitForExit(t.id);
      assert.match((await m.read(t.id)).output, new RegExp(`^${join(dir.path, "sub")}\\r?$`, "m"));
      const sh = await m.create({
        command: "bash",
        args: ["--norc", "--noprofile", "-c", 'echo "PWD=$PWD"'],
        cwd: "sub",
      });
      await m.waitForExit(sh.id);
      assert.match((await m.read(sh.id)).output, new RegExp(`^PWD=${join(dir.path, "sub")}\\r?$`, "m"));
      await rejectsWithCode(m.create({ cwd: ".." }), "PATH_OUTSIDE_WORKSPACE");
      await rejectsWithCode(m.create({ cwd: outside.path }), "PATH_OUTSIDE_WORKSPACE");
      await rejectsWithCode(m.create({ cwd: "/" }), "PATH_OUTSIDE_WORKSPACE");
      await rejectsWithCode(m.create({ cwd: "escape" }), "PATH_OUTSIDE_WORKSPACE");
      await rejectsWithCode(m.create({ cwd: "sub/../../x" }), "PATH_OUTSIDE_WORKSPACE");
      await rejectsWithCode(m.create({ cwd: "file.txt" }), "NOT_DIRECTORY");
      await rejectsWithCode(m.create({ cwd: "missing" }), "NOT_FOUND");
      await rejectsWithCode(m.create({ cwd: "sub\0/../.." }), "INVALID_PATH");
    });

    it("decodes UTF-8 (multi-byte and wide characters) in output and on the screen", async () => {
      const t = await m.create({ command: "printf", args: ["héllo 世界 ok\\n"], cols: 40, rows: 4 });
      await m.waitForExit(t.id);
      const r = await m.read(t.id);
      assert.match(r.output, /^héllo 世界 ok\r?\n$/);
      assert.equal(r.screen, "héllo 世界 ok");
    });

    it("cancels waits with an AbortSignal", async () => {
      const t = await m.create({ command: "sleep", args: ["1000"] });
      const ac = new AbortController();
      const waiting = m.waitForExit(t.id, ac.signal);
      const reading = m.read(t.id, { waitMs: 600_000, signal: ac.signal });
      ac.abort();
      await rejectsWithCode(waiting, "ABORTED");
      await rejectsWithCode(reading, "ABORTED");
      await m.kill(t.id);
    });

    it("renders cursor-addressed output and carriage-return overwrites on the screen", async () => {
      const t = await m.create({
        command: "printf",
        args: ["hello world\\rHELLO\\nsecond line\\033[5;3Hat-5-3\\033[2;1Hxx"],
        cols: 40,
        rows: 8,
      });
      await m.waitForExit(t.id);
      const r = await m.read(t.id);
      assert.equal(r.screen, "HELLO world\nxxcond line\n\n\n  at-5-3");
      assert.deepEqual(r.cursor, { x: 2, y: 1 });
    });

    it("passes env, drops ccb's own secrets and reports unknown commands", async () => {
      const saved = process.env.CCB_AUTH_TOKEN;
      process.env.CCB_AUTH_TOKEN = "secret-token-value";
      try {
        const t = await m.create({
          command: "bash",
          args: ["--norc", "--noprofile", "-c", 'echo "tok=${CCB_AUTH_TOKEN:-none} foo=$FOO"'],
          env: { FOO: "bar" },
        });
        await m.waitForExit(t.id);
        assert.match((await m.read(t.id)).output, /tok=none foo=bar/);
      } finally {
        if (saved === undefined) delete process.env.CCB_AUTH_TOKEN;
        else process.env.CCB_AUTH_TOKEN = saved;
      }
      await rejectsWithCode(m.create({ command: "no-such-program-ccb" }), "NOT_FOUND");
      await rejectsWithCode(m.create({ command: "ls -la" }), "NOT_FOUND");
      await rejectsWithCode(m.read("t999"), "TERMINAL_NOT_FOUND");
      await rejectsWithCode(m.create({ cols: 0 }), "INVALID_ARGUMENT");
    });

    it("dispose kills every child and leaves no orphans", async () => {
      const d = new TerminalManager(new Workspace([dir.path]), silentLogger, { backend, killGraceMs: 1000 });
      const shell = await d.create({ command: "bash", args: ["--norc", "--noprofile"] });
      d.write(shell.id, "sleep 1000 & echo bg=$!\n");
      const bg = Number(/bg=(\d+)/.exec(await waitForOutput(d, shell.id, /bg=(\d+)/))?.[1]);
      // A terminal that exited on its own but left a hang-up-proof job behind in its session.
      const quitter = await d.create({
        command: "bash",
        args: ["-c", "trap '' HUP; sleep 1000 >/dev/null 2>&1 & echo orphan=$!"],
      });
      const orphan = Number(/orphan=(\d+)/.exec(await waitForOutput(d, quitter.id, /orphan=(\d+)/))?.[1]);
      await d.waitForExit(quitter.id);
      assert.ok(isAlive(orphan), "the orphan outlives its terminal until shutdown");
      await d.dispose();
      for (const pid of [shell.pid as number, bg, orphan]) assert.equal(isAlive(pid), false, `pid ${pid} still alive`);
      assert.deepEqual(d.list(), []);
      await rejectsWithCode(d.create({}), "UNSUPPORTED");
    });
  });
}
