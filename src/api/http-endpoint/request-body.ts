import type { IncomingMessage } from "node:http";
import { MalformedBodyError, PayloadTooLargeError } from "../../domain/errors.js";

/** The request was over the limit: answer it and close the connection, whose rest of the body is not read. */
export class BodyTooLargeError extends PayloadTooLargeError {
  constructor(limitBytes: number) {
    super(`The request body is over the endpoint's limit of ${Math.round(limitBytes / 1024)} KB. Send a smaller body.`, { limit_bytes: limitBytes });
  }
}

/**
 * A request's body as UTF-8 text, at most `limitBytes`: a declared length
 * over the limit is refused before anything is read, a streamed body as soon
 * as it passes it. Rejects when the client goes away mid-body.
 */
export function readBodyText(request: IncomingMessage, limitBytes: number): Promise<string> {
  const declared = Number(request.headers["content-length"]);
  if (declared > limitBytes) return Promise.reject(new BodyTooLargeError(limitBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limitBytes) {
        cleanUp();
        reject(new BodyTooLargeError(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanUp();
      // One chunk is the common case: no concatenation.
      resolve(chunks.length === 0 ? "" : chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks, received).toString("utf8"));
    };
    const onError = (error: Error) => {
      cleanUp();
      reject(new MalformedBodyError(`The request body could not be read: ${error.message}.`));
    };
    const cleanUp = () => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onError);
    };
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", onError);
  });
}
