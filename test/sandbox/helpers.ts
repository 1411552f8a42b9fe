import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox, type ComponentBundle, type InvokeCallbacks, type InvokeRequest, type InvokeResult, type Sandbox, type SandboxOptions } from "../../src/sandbox/sandbox.js";
import type { Limits } from "../../src/sandbox/limits.js";

export const LIMITS: Limits = { timeoutMs: 10_000, memoryMb: 128, maxLogBytes: 1024 * 1024 };

/** A sandbox with its own temp folder; every bundle is written to a folder of its own inside it. */
export class SandboxFixture {
  readonly root: string;
  readonly sandbox: Sandbox;
  private count = 0;

  constructor(options: Partial<SandboxOptions> = {}) {
    this.root = mkdtempSync(join(tmpdir(), "runnel-sandbox-test-"));
    const workDir = join(this.root, "work");
    mkdirSync(workDir);
    this.sandbox = createSandbox({ workDir, maxRunners: 4, ...options });
  }

  /** Writes `source` as the CommonJS module of a new bundle (extra files beside it when given). */
  bundle(source: string, options: { ownerId?: string; files?: Record<string, string> } = {}): ComponentBundle {
    this.count += 1;
    const dir = join(this.root, `bundle-${this.count}`);
    mkdirSync(dir);
    const file = join(dir, "component.js");
    writeFileSync(file, source);
    for (const [name, text] of Object.entries(options.files ?? {})) writeFileSync(join(dir, name), text);
    const id = createHash("sha256").update(source).digest("hex").slice(0, 16);
    return { id, ownerId: options.ownerId ?? "user_1", file };
  }

  /** A run call with an empty event unless `request` says otherwise. */
  invoke(bundle: ComponentBundle, request: Partial<Omit<InvokeRequest, "bundle">> = {}, callbacks?: InvokeCallbacks): Promise<InvokeResult> {
    return this.sandbox.invoke(
      { bundle, call: { kind: "run", event: {} }, props: {}, dbProps: [], db: {}, ...request, limits: { ...LIMITS, ...request.limits } },
      callbacks,
    );
  }

  async close(): Promise<void> {
    await this.sandbox.close();
    rmSync(this.root, { recursive: true, force: true });
  }
}
