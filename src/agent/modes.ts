import { existsSync } from "node:fs";
import type { SessionConfigOption, SessionModeState } from "@agentclientprotocol/sdk/unstable";

export const MODE_IDS = ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions", "auto"] as const;
export type ModeId = (typeof MODE_IDS)[number];

export const MODES: Record<ModeId, { name: string; description: string }> = {
  default: { name: "Default", description: "Ask before edits, commands and other side effects." },
  acceptEdits: { name: "Accept Edits", description: "Apply file edits without asking; ask before commands." },
  plan: {
    name: "Plan",
    description: "Read-only: explore and write a plan; nothing changes until the plan is approved.",
  },
  dontAsk: { name: "Don't Ask", description: "Never ask: run what rules allow, refuse everything else." },
  bypassPermissions: {
    name: "Bypass Permissions",
    description: "Run every tool without asking (refused as root outside a sandbox).",
  },
  auto: {
    name: "Auto",
    description: "Run reads, edits inside the project and known read-only commands; ask for the rest.",
  },
};

export function isModeId(v: string): v is ModeId {
  return (MODE_IDS as readonly string[]).includes(v);
}

export const THOUGHT_LEVELS = { off: 0, low: 4_000, medium: 10_000, high: 32_000 } as const;
export type ThoughtLevel = keyof typeof THOUGHT_LEVELS;
export function isThoughtLevel(v: string): v is ThoughtLevel {
  return v in THOUGHT_LEVELS;
}

export interface SandboxFacts {
  uid: number | undefined;
  env: NodeJS.ProcessEnv;
  containerMarker: boolean;
}

export function sandboxFacts(): SandboxFacts {
  return {
    uid: process.getuid?.(),
    env: process.env,
    containerMarker: existsSync("/.dockerenv") || existsSync("/run/.containerenv"),
  };
}

/** bypassPermissions is refused for root unless we run in a sandbox (container, or IS_SANDBOX=1 / CCB_SANDBOX=1). Returns the reason when refused. */
export function bypassRefusal(f: SandboxFacts): string | undefined {
  if (f.uid !== 0) return undefined;
  if (f.env.IS_SANDBOX === "1" || f.env.CCB_SANDBOX === "1" || f.containerMarker) return undefined;
  return "bypassPermissions is refused: ccb runs as root outside a sandbox, so every command would run unchecked with full system rights. Run ccb as a normal user, or inside a container/VM (set CCB_SANDBOX=1 there).";
}

export function modeState(current: ModeId, facts: SandboxFacts): SessionModeState {
  const refused = bypassRefusal(facts);
  return {
    currentModeId: current,
    availableModes: MODE_IDS.filter((id) => id !== "bypassPermissions" || !refused).map((id) => ({
      id,
      name: MODES[id].name,
      description: MODES[id].description,
    })),
  };
}

export interface SessionConfig {
  mode: ModeId;
  model: string;
  models: string[];
  thought: ThoughtLevel;
}

export function configOptions(c: SessionConfig, facts: SandboxFacts): SessionConfigOption[] {
  const modes = modeState(c.mode, facts).availableModes;
  return [
    {
      id: "mode",
      name: "Mode",
      description: "Permission mode",
      category: "mode",
      type: "select",
      currentValue: c.mode,
      options: modes.map((m) => ({ value: m.id, name: m.name, description: m.description ?? null })),
    },
    {
      id: "model",
      name: "Model",
      category: "model",
      type: "select",
      currentValue: c.model,
      options: c.models.map((m) => ({ value: m, name: m })),
    },
    {
      id: "thought_level",
      name: "Thinking",
      description: "Extended thinking budget",
      category: "thought_level",
      type: "select",
      currentValue: c.thought,
      options: (Object.keys(THOUGHT_LEVELS) as ThoughtLevel[]).map((t) => ({
        value: t,
        name: t === "off" ? "Off" : `${t[0]!.toUpperCase()}${t.slice(1)} (${THOUGHT_LEVELS[t]} tokens)`,
      })),
    },
  ];
}

/** Context window size used for usage_update. */
export function contextWindow(model: string): number {
  return /\[1m\]|-1m\b/.test(model) ? 1_000_000 : 200_000;
}
