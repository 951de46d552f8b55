import type { Usage } from "@agentclientprotocol/sdk/unstable";
import type { Usage as ApiUsage } from "@anthropic-ai/sdk/resources/messages";

/** US dollars per million tokens. Cache writes cost 1.25x input and cache reads 0.1x unless given. */
export interface Price {
  input: number;
  output: number;
  cacheWrite?: number;
  cacheRead?: number;
}

/** Published Anthropic list prices of the models whose prices are known; any other model has no cost. */
const KNOWN: { match: RegExp; price: Price }[] = [
  { match: /^claude-opus-4-[5-9]/, price: { input: 5, output: 25 } },
  { match: /^claude-opus-4(?:-[01])?(?:-\d{8})?$|^claude-3-opus/, price: { input: 15, output: 75 } },
  { match: /^claude-sonnet-4|^claude-3-[57]-sonnet/, price: { input: 3, output: 15 } },
  { match: /^claude-haiku-4-5/, price: { input: 1, output: 5 } },
  { match: /^claude-3-5-haiku/, price: { input: 0.8, output: 4 } },
];

/** The price of a model: settings first (exact id), then the known list. */
export function priceOf(model: string, overrides: Record<string, Price> = {}): Price | undefined {
  return overrides[model] ?? KNOWN.find((k) => k.match.test(model))?.price;
}

/** Token counts of one or more model responses. */
export interface TokenCounts {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export const ZERO_TOKENS: TokenCounts = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

export function countsOf(u: ApiUsage): TokenCounts {
  return {
    input: u.input_tokens ?? 0,
    output: u.output_tokens ?? 0,
    cacheRead: u.cache_read_input_tokens ?? 0,
    cacheWrite: u.cache_creation_input_tokens ?? 0,
  };
}

export function addCounts(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
  };
}

/** Cost in US dollars of these tokens at this price. */
export function costOf(t: TokenCounts, p: Price): number {
  const perToken = (perMillion: number) => perMillion / 1_000_000;
  return (
    t.input * perToken(p.input) +
    t.output * perToken(p.output) +
    t.cacheWrite * perToken(p.cacheWrite ?? p.input * 1.25) +
    t.cacheRead * perToken(p.cacheRead ?? p.input * 0.1)
  );
}

/** ACP `Usage` of a prompt turn. */
export function acpUsage(t: TokenCounts): Usage {
  return {
    totalTokens: t.input + t.output + t.cacheRead + t.cacheWrite,
    inputTokens: t.input,
    outputTokens: t.output,
    cachedReadTokens: t.cacheRead,
    cachedWriteTokens: t.cacheWrite,
  };
}
