import type { IncomingMessage } from "node:http";

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`Request body too large: the limit is ${limit} bytes.`);
  }
}

/** Read a request body up to `limit` bytes; rejects with BodyTooLargeError beyond it (declared or streamed). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new BodyTooLargeError(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks, size));
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        finish(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(c);
    };
    const onEnd = () => finish();
    const onError = (e: Error) => finish(e);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}
