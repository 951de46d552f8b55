/**
 * A bounded wait: `p`, or a rejection naming what did not happen once `ms` have passed. Every wait on
 * a peer in a test goes through this (or its own bound), so a stuck step fails with its own name
 * instead of hanging its file until the runner's file timeout hides which step it was.
 */
export function bounded<T>(p: Promise<T>, ms: number, what: string | (() => string)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const text = typeof what === "function" ? what() : what;
      reject(new Error(`${text}: did not happen within ${Math.round(ms / 1000)} s`));
    }, ms);
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}

/** Whether `p` has settled yet, as a check to poll (its outcome is still the caller's to await). */
export function settled(p: Promise<unknown>): () => boolean {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  return () => done;
}
