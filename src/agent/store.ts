import {
  appendFileSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import type { SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { CcbError } from "../core/errors.ts";
import type { TokenCounts } from "./pricing.ts";
import type { SessionOptions } from "./session-options.ts";

/**
 * Sessions as append-only JSONL, one file per session: `<dataDir>/sessions/<sessionId>.jsonl`.
 * Every step (user prompt, model message, tool result, final tool state) is one line written with a
 * synchronous append, so a `kill -9` loses at most the step in flight. Nothing is ever rewritten.
 */
export type StoreRecord =
  | { t: "meta"; v: 1; sessionId: string; cwd: string; createdAt: string; forkedFrom?: string }
  | { t: "title"; title: string }
  | { t: "turn_start"; turn: number; at: string }
  | { t: "turn_end"; turn: number; stopReason: string }
  /** A replayable update (user/agent/thought chunks, final tool calls, plans). */
  | { t: "update"; turn: number; update: SessionUpdate }
  /** One message of the model conversation. */
  | { t: "message"; turn: number; message: MessageParam }
  | { t: "mode"; modeId: string }
  /** /compact (summary) or /clear (null): the model's conversation restarts from here; earlier records stay for replay. */
  | { t: "compact"; turn: number; summary: string | null }
  /** Tokens of one model response (context use, cost). */
  | { t: "usage"; turn: number; model: string; tokens: TokenCounts }
  /** Session options from session/new|load|resume (system prompt, max turns, extra roots). */
  | { t: "options"; options: SessionOptions }
  | { t: "config"; configId: string; value: string };

export interface StoredSession {
  sessionId: string;
  cwd: string;
  title: string | undefined;
  createdAt: string;
  updatedAt: string;
  records: StoreRecord[];
}

export interface SessionSummary {
  sessionId: string;
  cwd: string;
  title?: string;
  updatedAt: string;
}

const ID_RE = /^[A-Za-z0-9_-]{8,80}$/;

export class SessionStore {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, "sessions");
  }

  private ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  pathOf(sessionId: string): string {
    if (!ID_RE.test(sessionId)) throw new CcbError("INVALID_ARGUMENT", `Invalid session id: ${sessionId}`);
    return join(this.dir, `${sessionId}.jsonl`);
  }

  exists(sessionId: string): boolean {
    return ID_RE.test(sessionId) && existsSync(this.pathOf(sessionId));
  }

  create(sessionId: string, cwd: string, forkedFrom?: string): SessionWriter {
    this.ensureDir();
    const meta: StoreRecord = {
      t: "meta",
      v: 1,
      sessionId,
      cwd,
      createdAt: new Date().toISOString(),
      ...(forkedFrom ? { forkedFrom } : {}),
    };
    const fd = openSync(this.pathOf(sessionId), "wx", 0o600);
    writeSync(fd, `${JSON.stringify(meta)}\n`);
    closeSync(fd);
    return new SessionWriter(this.pathOf(sessionId));
  }

  writer(sessionId: string): SessionWriter {
    return new SessionWriter(this.pathOf(sessionId));
  }

  /** Read a session; a torn last line (kill -9 mid-write) is ignored. */
  read(sessionId: string): StoredSession {
    if (!this.exists(sessionId)) throw new CcbError("NOT_FOUND", `Session not found: ${sessionId}`);
    const path = this.pathOf(sessionId);
    const text = readFileSync(path, "utf8");
    const records: StoreRecord[] = [];
    for (const line of text.split("\n")) {
      if (!line) continue;
      try {
        records.push(JSON.parse(line) as StoreRecord);
      } catch {
        // torn write at the end of the file
      }
    }
    const meta = records[0];
    if (meta?.t !== "meta") throw new CcbError("CONFIG_INVALID", `Session file is damaged: ${path}`);
    let title: string | undefined;
    for (const r of records) if (r.t === "title") title = r.title;
    return {
      sessionId,
      cwd: meta.cwd,
      title,
      createdAt: meta.createdAt,
      updatedAt: statSync(path).mtime.toISOString(),
      records,
    };
  }

  /** Copy a session's history into a new session (fork). */
  fork(fromId: string, toId: string, cwd: string): SessionWriter {
    const src = this.read(fromId);
    const w = this.create(toId, cwd, fromId);
    for (const r of src.records) if (r.t !== "meta") w.append(r);
    return w;
  }

  delete(sessionId: string): boolean {
    if (!this.exists(sessionId)) return false;
    unlinkSync(this.pathOf(sessionId));
    return true;
  }

  /** Sessions (optionally of one cwd), most recently updated first. */
  list(cwd?: string): SessionSummary[] {
    if (!existsSync(this.dir)) return [];
    const out: SessionSummary[] = [];
    for (const name of readdirSync(this.dir)) {
      if (!name.endsWith(".jsonl")) continue;
      const id = name.slice(0, -".jsonl".length);
      try {
        const s = this.read(id);
        if (cwd !== undefined && s.cwd !== cwd) continue;
        out.push({ sessionId: id, cwd: s.cwd, updatedAt: s.updatedAt, ...(s.title ? { title: s.title } : {}) });
      } catch {
        // unreadable file: not listed
      }
    }
    return out.sort((a, b) =>
      a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.sessionId.localeCompare(b.sessionId),
    );
  }

  /** For tests and tools: copy the raw file. */
  copyRaw(sessionId: string, to: string): void {
    copyFileSync(this.pathOf(sessionId), to);
  }
}

export class SessionWriter {
  constructor(readonly path: string) {}

  /** One synchronous append per record: on disk (in the OS) before the next step starts. */
  append(record: StoreRecord): void {
    appendFileSync(this.path, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  }
}
