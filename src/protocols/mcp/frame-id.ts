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
        return s !== undefined && s.length <= 256 ? s : null;
      }
      const m = /^-?\d+(?=[\s,}])/.exec(prefix.slice(i));
      if (!m) return null;
      const v = Number(m[0]);
      return Number.isSafeInteger(v) ? v : null;
    }
    if (!skipValue()) return null;
    ws();
    if (prefix[i] !== ",") return null;
    i++;
  }
}
