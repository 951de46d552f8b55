/**
 * JSON with comments, as VS Code writes its settings and launch.json: `//` and `/* *\/` comments
 * and trailing commas before `}` or `]` are allowed. Parsed by blanking those out (strings are
 * copied verbatim, so a `//` inside a string stays) and handing the rest to JSON.parse, whose
 * errors are the caller's to report.
 */
export function parseJsonc(text: string): unknown {
  let out = "";
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i] as string;
    if (c === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < n && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
      out += " ";
    } else if (c === ",") {
      // A trailing comma: only blanks and comments (already dropped from `out` later) up to } or ].
      let j = i + 1;
      for (;;) {
        while (j < n && /\s/.test(text[j] as string)) j++;
        if (text[j] === "/" && text[j + 1] === "/") while (j < n && text[j] !== "\n") j++;
        else if (text[j] === "/" && text[j + 1] === "*") {
          const end = text.indexOf("*/", j + 2);
          j = end < 0 ? n : end + 2;
        } else break;
      }
      if (text[j] !== "}" && text[j] !== "]") out += c;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return JSON.parse(out);
}
