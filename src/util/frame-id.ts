import { echoedId } from "./jsonrpc.ts";

/**
 * The top-level `id` of a JSON-RPC message read from the START of its frame (the rest may be cut
 * off): a small scanner that tracks nesting and strings, so an `"id"` inside `params` is never
 * taken. Returns null when the id cannot be read from the prefix (absent, after the cut, or not a
 * string/safe integer).
 */
export function idFromPrefix(prefix: string): string | number | null {
  let i = 0;
  const n = prefix.length;
  const ws = () => {
    while (i < n && /\s/.test(prefix[i] as string)) i++;
  };
  const readString = (): string | undefined => {
    if (prefix[i] !== '"') return undefined;
    let j = i + 1;
    while (j < n && prefix[j] !== '"') j += prefix[j] === "\\" ? 2 : 1;
    if (j >= n) return undefined;
    try {
      const s = JSON.parse(prefix.slice(i, j + 1)) as string;
      i = j + 1;
      return s;
    } catch {
      return undefined;
    }
  };
  /** Skip one value of any type; false when the prefix ends inside it. */
  const skipValue = (): boolean => {
    ws();
    if (i >= n) return false;
    if (prefix[i] === '"') return readString() !== undefined;
    if (prefix[i] === "{" || prefix[i] === "[") {
      let depth = 0;
      while (i < n) {
        const c = prefix[i];
        if (c === '"') {
          if (readString() === undefined) return false;
          continue;
        }
        if (c === "{" || c === "[") depth++;
        else if (c === "}" || c === "]") {
          depth--;
          if (depth === 0) {
            i++;
            return true;
          }
        }
        i++;
      }
      return false;
    }
    const m = /^[^,}\]\s]+/.exec(prefix.slice(i));
    if (!m) return false;
    i += m[0].length;
    return i < n;
  };
  ws();
  if (prefix[i] !== "{") return null;
  i++;
  for (;;) {
    ws();
    const key = readString();
    if (key === undefined) return null;
    ws();
    if (prefix[i] !== ":") return null;
    i++;
    ws();
    if (key === "id") {
      if (prefix[i] === '"') {
        const s = readString();
        return s !== undefined ? echoedId(s) : null;
      }
      const m = /^-?\d+(?=[\s,}])/.exec(prefix.slice(i));
      if (!m) return null;
      const v = Number(m[0]);
      return echoedId(v);
    }
    if (!skipValue()) return null;
    ws();
    if (prefix[i] !== ",") return null;
    i++;
  }
}

/**
 * The top-level `id` read from the END of a frame (the SDK puts `jsonrpc` and `id` after
 * `params`): walks back over the last members of the outer object while their values are
 * primitives. Returns null when the id is not among them or not a string/safe integer.
 */
export function idFromSuffix(suffix: string): string | number | null {
  let i = suffix.trimEnd().length - 1;
  if (suffix[i] !== "}") return null;
  i--;
  const ws = () => {
    while (i >= 0 && /\s/.test(suffix[i] as string)) i--;
  };
  /** The string ending at i (its closing quote); moves i before its opening quote. */
  const stringBack = (): string | undefined => {
    if (suffix[i] !== '"') return undefined;
    const end = i;
    let j = i - 1;
    for (; j >= 0; j--) {
      if (suffix[j] !== '"') continue;
      let k = j - 1;
      let slashes = 0;
      while (k >= 0 && suffix[k] === "\\") {
        slashes++;
        k--;
      }
      if (slashes % 2 === 0) break;
    }
    if (j < 0) return undefined;
    try {
      const s = JSON.parse(suffix.slice(j, end + 1)) as string;
      i = j - 1;
      return s;
    } catch {
      return undefined;
    }
  };
  for (let member = 0; member < 4; member++) {
    ws();
    let value: string | number | null | undefined;
    if (suffix[i] === '"') {
      value = stringBack();
      if (value === undefined) return null;
    } else {
      const m = /(-?\d+|true|false|null)$/.exec(suffix.slice(0, i + 1));
      if (!m) return null;
      value = /^-?\d+$/.test(m[1] as string) ? Number(m[1]) : null;
      i -= (m[1] as string).length;
    }
    ws();
    if (suffix[i] !== ":") return null;
    i--;
    ws();
    const key = stringBack();
    if (key === undefined) return null;
    if (key === "id") {
      return echoedId(value);
    }
    ws();
    if (suffix[i] !== ",") return null;
    i--;
  }
  return null;
}
