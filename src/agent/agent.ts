import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { McpServer, SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { CredentialStore } from "../core/model-key-store.ts";
import { replayUpdates } from "./history.ts";
import { missingCredentials } from "./model-error.ts";
import { type SandboxFacts, sandboxFacts } from "./modes.ts";
import type { AgentPeer } from "./peer.ts";
import type { Session } from "./session.ts";
import type { SessionOptions } from "./session-options.ts";
import { type AgentEnv, loadModelSettings } from "./settings.ts";
import { SessionStore } from "./store.ts";
import type { AcpWorkbenchOptions } from "./workbench.ts";

export interface AgentOptions {
  env: AgentEnv;
  log: Logger;
  facts?: SandboxFacts;
  /** How sessions get a live editor (default: attach to a workbench only, never start one). */
  workbench?: AcpWorkbenchOptions | undefined;
}

/** What opening a session needs, whatever protocol asked. */
export interface OpenRequest {
  cwd: string;
  mcpServers?: McpServer[] | null | undefined;
  options?: SessionOptions;
}

export interface SessionListing {
  sessions: { sessionId: string; cwd: string; title: string | null; updatedAt: string }[];
  nextCursor?: string;
}

const PAGE_SIZE = 50;

const loadSession = () => import("./session.ts");
const newSessionId = () => `ccb-${randomUUID()}`;

function checkCwd(cwd: string): string {
  if (!isAbsolute(cwd)) throw new CcbError("INVALID_ARGUMENT", `cwd must be an absolute path: ${cwd}`);
  if (!existsSync(cwd) || !statSync(cwd).isDirectory())
    throw new CcbError("INVALID_ARGUMENT", `cwd is not an existing directory: ${cwd}`);
  return cwd;
}

/**
 * ccb's agent for one connection, with no protocol in it: it opens, resumes, forks, lists, closes
 * and deletes sessions (stored as JSONL under the data folder), and each session runs prompts
 * (`Session.prompt`: the model loop, tools, permissions) and sends its events to the connection's
 * `AgentPeer`. Failures are `CcbError`s and `ModelError`s; each front end maps them once.
 */
export class CcbAgent {
  readonly env: AgentEnv;
  readonly log: Logger;
  private readonly facts: SandboxFacts;
  private readonly store: SessionStore;
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly options: AgentOptions) {
    this.env = options.env;
    this.log = options.log;
    this.facts = options.facts ?? sandboxFacts();
    this.store = new SessionStore(options.env.dataDir);
  }

  /** An API key or auth token is configured (environment, sign-in or settings files of this project). */
  hasCredentials(cwd: string = process.cwd()): boolean {
    const settings = loadModelSettings(this.env, cwd);
    return Boolean(settings.apiKey ?? settings.authToken);
  }

  /** Throws the "sign in" error when no credentials are configured. */
  requireCredentials(cwd?: string): void {
    if (!this.hasCredentials(cwd)) throw missingCredentials();
  }

  /** Sign out: the stored key is removed; open sessions that used it stop using it (a key from the environment stays). */
  logout(): void {
    if (this.env.configDir) new CredentialStore(this.env.configDir).remove();
    for (const s of this.sessions.values()) s.signedOut();
    this.log.info("logout: the stored sign-in key was removed");
  }

  /** An open session, or NOT_FOUND. */
  active(sessionId: string): Session {
    const s = this.sessions.get(sessionId);
    if (!s) throw new CcbError("NOT_FOUND", `Session not found: ${sessionId}`);
    return s;
  }

  /** An open session, if there is one (cancel of an unknown session is no error). */
  find(sessionId: string): Session | undefined {
    return this.sessions.get(sessionId);
  }

  /** A new session; its first permission mode may come from the client (unknown or refused modes are logged and ignored). */
  async newSession(peer: AgentPeer, req: OpenRequest & { initialMode?: unknown }): Promise<Session> {
    const cwd = checkCwd(req.cwd);
    this.requireCredentials(cwd);
    const s = await this.open(peer, newSessionId(), cwd, req, false);
    s.requestInitialMode(req.initialMode);
    return s;
  }

  /** A stored session opened again (load and resume); `history` is its conversation as events, for a replay. */
  async reopen(
    peer: AgentPeer,
    sessionId: string,
    req: OpenRequest,
  ): Promise<{ session: Session; history: SessionUpdate[] }> {
    const cwd = checkCwd(req.cwd);
    if (!this.store.exists(sessionId)) throw new CcbError("NOT_FOUND", `Session not found: ${sessionId}`);
    const records = this.store.read(sessionId).records;
    const session = await this.open(peer, sessionId, cwd, req, true);
    return { session, history: replayUpdates(records) };
  }

  /** A copy of a stored session under a new id, opened. */
  async fork(peer: AgentPeer, sessionId: string, req: OpenRequest): Promise<Session> {
    const cwd = checkCwd(req.cwd);
    if (!this.store.exists(sessionId)) throw new CcbError("NOT_FOUND", `Session not found: ${sessionId}`);
    const id = newSessionId();
    this.store.fork(sessionId, id, cwd).append({
      t: "title",
      title: `Fork of ${this.store.read(sessionId).title ?? sessionId}`.slice(0, 80),
    });
    return await this.open(peer, id, cwd, { cwd, mcpServers: req.mcpServers }, true);
  }

  /** Stored sessions, newest first, 50 a page; `cursor` is the opaque one of the previous page. */
  list(cwd?: string | null, cursor?: string | null): SessionListing {
    const all = this.store.list(cwd ?? undefined);
    const offset = cursor ? Number(Buffer.from(cursor, "base64url").toString("utf8")) : 0;
    if (!Number.isInteger(offset) || offset < 0) throw new CcbError("INVALID_ARGUMENT", "Invalid cursor.");
    const page = all.slice(offset, offset + PAGE_SIZE);
    const next =
      offset + PAGE_SIZE < all.length ? Buffer.from(String(offset + PAGE_SIZE)).toString("base64url") : undefined;
    return {
      sessions: page.map((p) => ({
        sessionId: p.sessionId,
        cwd: p.cwd,
        title: p.title ?? null,
        updatedAt: p.updatedAt,
      })),
      ...(next ? { nextCursor: next } : {}),
    };
  }

  /** Close an open session (its running prompt ends as cancelled); NOT_FOUND when it is not open. */
  async close(sessionId: string): Promise<void> {
    const s = this.active(sessionId);
    this.sessions.delete(sessionId);
    await s.close();
  }

  /** Close (when open) and delete a stored session; NOT_FOUND when there is neither. */
  async delete(sessionId: string): Promise<void> {
    const s = this.sessions.get(sessionId);
    if (s) {
      this.sessions.delete(sessionId);
      await s.close();
    }
    if (!this.store.delete(sessionId) && !s) throw new CcbError("NOT_FOUND", `Session not found: ${sessionId}`);
  }

  /** The connection ended: every session closes (its workbench released); settles when all did. */
  closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    return Promise.all(all.map((s) => s.close().catch(() => undefined))).then(() => undefined);
  }

  private async open(peer: AgentPeer, id: string, cwd: string, req: OpenRequest, fromStore: boolean): Promise<Session> {
    const previous = this.sessions.get(id);
    if (previous) {
      this.sessions.delete(id);
      await previous.close();
    }
    const stored = fromStore ? this.store.read(id) : undefined;
    const { Session } = await loadSession(); // loaded on first use: initialize stays fast
    const s = await Session.open(
      { peer, env: this.env, store: this.store, log: this.log, facts: this.facts, workbench: this.options.workbench },
      {
        id,
        cwd,
        mcpServers: req.mcpServers ?? [],
        options: req.options ?? {},
        writer: fromStore ? this.store.writer(id) : this.store.create(id, cwd),
        ...(stored ? { records: stored.records, title: stored.title } : {}),
      },
    );
    this.sessions.set(id, s);
    return s;
  }
}
