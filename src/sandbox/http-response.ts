/**
 * What a component passed to `this.<http prop>.respond()`, after the runner
 * checked it: the status is an integer in 100..599, header values are strings,
 * and an object body has been encoded as JSON (with `content-type:
 * application/json` unless the component set a content type itself).
 */
export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string | Uint8Array | null;
}
