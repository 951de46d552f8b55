// The generated source tree of the search benchmarks (deterministic).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  "const let function return import export from class interface type async await if else for while switch case break value result error data item list map set get push pop index count total".split(
    " ",
  );

/** ~FILES files in nested directories (up to 9 levels), plus an ignored folder, with NEEDLES needles in chosen files. */
export function generateTree(
  root: string,
  FILES: number,
  NEEDLES: number,
  NEEDLE: string,
): { files: number; needlePaths: string[] } {
  const rnd = prng(42);
  const needleAt = new Set<number>();
  while (needleAt.size < NEEDLES) needleAt.add(Math.floor(rnd() * FILES));
  const needlePaths: string[] = [];
  writeFileSync(join(root, ".gitignore"), "ignored_build/\n*.log\n");
  mkdirSync(join(root, "ignored_build"));
  for (let i = 0; i < 200; i++)
    writeFileSync(join(root, "ignored_build", `b${i}.js`), `${NEEDLE} in an ignored file\n`);
  let made = 0;
  let dirIndex = 0;
  while (made < FILES) {
    const depth = 1 + Math.floor(rnd() * 9);
    const parts: string[] = [];
    for (let d = 0; d < depth; d++) parts.push(`d${d}_${Math.floor(rnd() * 6)}`);
    parts.push(`pkg${dirIndex++}`);
    const dir = join(root, ...parts);
    mkdirSync(dir, { recursive: true });
    const count = Math.min(FILES - made, 40 + Math.floor(rnd() * 80));
    for (let f = 0; f < count; f++) {
      const lines: string[] = [];
      const nLines = 5 + Math.floor(rnd() * 60);
      for (let l = 0; l < nLines; l++) {
        const w: string[] = [];
        const nWords = 3 + Math.floor(rnd() * 10);
        for (let k = 0; k < nWords; k++) w.push(WORDS[Math.floor(rnd() * WORDS.length)] as string);
        lines.push(w.join(" "));
      }
      const id = made + f;
      if (needleAt.has(id)) {
        lines.splice(Math.floor(rnd() * lines.length), 0, `// ${NEEDLE} #${needlePaths.length}`);
        needlePaths.push(join(...parts, `f${f}.ts`));
      }
      writeFileSync(join(dir, `f${f}.ts`), `${lines.join("\n")}\n`);
    }
    made += count;
  }
  return { files: made, needlePaths };
}
