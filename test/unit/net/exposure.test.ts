import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { isCcbError } from "../../../src/core/errors.ts";
import { silentLogger } from "../../../src/core/log.ts";
import {
  admitPublicUrl,
  checkExposure,
  checkPublicUrl,
  isPrivateLoopback,
  openExposure,
  readTlsFiles,
} from "../../../src/net/exposure.ts";
import { Gateway } from "../../../src/net/gateway.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

/** The one exposure policy every listener asks (serve, link, stream, ide, the workbench gateway). */
describe("exposure policy", () => {
  const serve = (host: string, tls: boolean, token: boolean, proxy: { publicUrl?: URL; trustProxy?: boolean } = {}) =>
    checkExposure({ listener: "serve", host, tls, token, ...proxy });

  it("serve: a non-loopback address needs TLS and a bearer token", () => {
    assert.doesNotThrow(() => serve("127.0.0.1", false, false));
    assert.throws(() => serve("0.0.0.0", false, false), /needs TLS \(--cert and --key\) and a bearer token/);
    assert.throws(() => serve("0.0.0.0", true, false), /needs a bearer token/);
    assert.throws(() => serve("0.0.0.0", false, true), /needs TLS/);
    assert.doesNotThrow(() => serve("0.0.0.0", true, true));
    assert.throws(
      () => serve("0.0.0.0", false, false),
      (err: unknown) => isCcbError(err, "CONFIG_INVALID"),
    );
  });

  it("--trust-proxy: plain HTTP on a public address only with an https public URL and a token", () => {
    const pub = new URL("https://ccb.example.test");
    assert.doesNotThrow(() => serve("0.0.0.0", false, true, { publicUrl: pub, trustProxy: true }));
    assert.throws(
      () => serve("0.0.0.0", false, false, { publicUrl: pub, trustProxy: true }),
      /--trust-proxy needs an https --public-url and a bearer token/,
    );
    assert.throws(
      () => serve("0.0.0.0", false, true, { publicUrl: new URL("http://127.0.0.1:9"), trustProxy: true }),
      /--trust-proxy needs/,
    );
    assert.throws(
      () => serve("0.0.0.0", false, true, { publicUrl: pub }),
      /needs TLS/,
      "without --trust-proxy the old rule holds",
    );
  });

  it("link: --no-auth only on loopback; with its token any address", () => {
    assert.doesNotThrow(() => checkExposure({ listener: "link", host: "localhost", token: false }));
    assert.doesNotThrow(() => checkExposure({ listener: "link", host: "0.0.0.0", token: true }));
    assert.throws(
      () => checkExposure({ listener: "link", host: "0.0.0.0", token: false }),
      (err: unknown) =>
        isCcbError(err, "INVALID_ARGUMENT") &&
        /--no-auth is only allowed on a loopback host, not 0\.0\.0\.0/.test(err.message),
    );
  });

  it("stream, ide and the workbench gateway: loopback only, whatever TLS or token", () => {
    for (const listener of ["stream", "ide", "workbench"] as const) {
      assert.doesNotThrow(() => checkExposure({ listener, host: "127.0.0.1" }), listener);
      assert.doesNotThrow(() => checkExposure({ listener, host: "[::1]" }), listener);
      assert.throws(
        () => checkExposure({ listener, host: "0.0.0.0", tls: true, token: true }),
        (err: unknown) =>
          isCcbError(err, "INVALID_ARGUMENT") && /binds loopback only, not 0\.0\.0\.0/.test(err.message),
        listener,
      );
    }
    assert.throws(
      () => checkExposure({ listener: "stream", host: "10.0.0.1" }),
      /^CcbError: ccb stream binds loopback only/,
    );
  });

  it("--public-url: https or loopback, an origin only, a token when not loopback", () => {
    assert.equal(checkPublicUrl("https://ccb.example.test", true).origin, "https://ccb.example.test");
    assert.equal(checkPublicUrl("http://127.0.0.1:8080", false).origin, "http://127.0.0.1:8080");
    assert.throws(() => checkPublicUrl("http://x", true), /must be https/);
    assert.throws(() => checkPublicUrl("https://ccb.example.test", false), /without a bearer token/);
    assert.throws(() => checkPublicUrl("https://ccb.example.test/sub", true), /must be an origin/);
    assert.throws(() => checkPublicUrl("ftp://ccb.example.test", true), /must be an origin/);
    assert.throws(() => checkPublicUrl("not a url", true), /is not a URL/);
  });

  it("readTlsFiles: both or neither, unreadable files named, CONFIG_INVALID", async () => {
    const dir = tmpdirFixture();
    try {
      const cert = join(dir.path, "c.pem");
      const key = join(dir.path, "k.pem");
      writeFileSync(cert, "CERT");
      writeFileSync(key, "KEY");
      assert.equal(await readTlsFiles(undefined, undefined), undefined);
      const got = await readTlsFiles(cert, key);
      assert.equal(got?.cert.toString(), "CERT");
      assert.equal(got?.key.toString(), "KEY");
      await assert.rejects(
        readTlsFiles(cert, undefined),
        (err: unknown) =>
          isCcbError(err, "CONFIG_INVALID") && /--cert and --key must be given together/.test(err.message),
      );
      await assert.rejects(readTlsFiles(undefined, key), /must be given together/);
      const missing = join(dir.path, "missing.pem");
      await assert.rejects(
        readTlsFiles(cert, missing),
        (err: unknown) =>
          isCcbError(err, "CONFIG_INVALID") && err.message.startsWith(`Cannot read the TLS key file ${missing}: `),
      );
    } finally {
      dir.cleanup();
    }
  });

  it("openExposure: TLS files read first, then the public URL, then the address", async () => {
    await assert.rejects(
      openExposure({
        listener: "serve",
        host: "0.0.0.0",
        certFile: "/nonexistent/c.pem",
        token: false,
        publicUrl: "x",
      }),
      /must be given together|Cannot read the TLS/,
    );
    await assert.rejects(
      openExposure({ listener: "serve", host: "0.0.0.0", token: false, publicUrl: "not a url" }),
      /is not a URL/,
    );
    await assert.rejects(openExposure({ listener: "serve", host: "0.0.0.0", token: true }), /needs TLS/);
    const ok = await openExposure({
      listener: "serve",
      host: "0.0.0.0",
      token: true,
      publicUrl: "https://ccb.example.test",
      trustProxy: true,
    });
    assert.equal(ok.tls, undefined);
    assert.equal(ok.publicUrl?.origin, "https://ccb.example.test");
  });

  it("a gateway behind a public URL answers its Host and Origin; only a loopback plain one at its own URL is private", async () => {
    const gw = new Gateway({ host: "127.0.0.1", port: 0, log: silentLogger });
    try {
      const url = await gw.listen();
      assert.equal(gw.hosts.check("ccb.example.test"), false);
      admitPublicUrl(gw, new URL("https://ccb.example.test"));
      assert.equal(gw.hosts.check("ccb.example.test"), true);
      assert.equal(gw.hosts.check("ccb.example.test:443"), true);
      assert.equal(isPrivateLoopback(gw, "127.0.0.1", url), true);
      assert.equal(isPrivateLoopback(gw, "127.0.0.1", "https://ccb.example.test"), false);
      assert.equal(isPrivateLoopback(gw, "0.0.0.0", url), false);
    } finally {
      await gw.close();
    }
  });
});
