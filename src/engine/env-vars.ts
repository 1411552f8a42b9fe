import { checkEnvInput, checkEnvName, MAX_ENV_VARS_PER_USER, type EnvVar } from "../domain/env-vars.js";
import { ConflictError, RunnelError } from "../domain/errors.js";
import type { Store } from "../store/store.js";
import type { SecretBox } from "./secrets.js";

export interface EnvVarsServiceOptions {
  store: Store;
  /** Seals secret values at rest, opens them for runs. */
  secrets: SecretBox;
  now?: () => number;
}

/**
 * Each user's environment variables: set, listed, removed through the API
 * and CLI, and resolved for a run's steps by name. A secret one is sealed
 * before it is stored and only ever opened to be handed to a run.
 */
export class EnvVarsService {
  private readonly now: () => number;

  constructor(private readonly options: EnvVarsServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async set(ownerId: string, name: string, body: { value?: unknown; secret?: unknown }): Promise<EnvVar> {
    checkEnvName(name);
    const { value, secret } = checkEnvInput(body);
    const { store, secrets } = this.options;
    const existing = await store.listEnvVars(ownerId);
    if (existing.length >= MAX_ENV_VARS_PER_USER && !existing.some((envVar) => envVar.name === name)) {
      throw new ConflictError(`You have ${existing.length} environment variables, the most one user may keep. Remove some you no longer use (runnel env unset <NAME>).`);
    }
    const at = this.now();
    return store.putEnvVar({ ownerId, name, value: secret ? secrets.seal(value) : value, secret, createdAt: at, updatedAt: at });
  }

  /** As stored: a secret one's value is sealed, for the caller to leave out. */
  list(ownerId: string): Promise<EnvVar[]> {
    return this.options.store.listEnvVars(ownerId);
  }

  async remove(ownerId: string, name: string): Promise<void> {
    if (!(await this.options.store.deleteEnvVar(ownerId, name))) {
      throw new RunnelError("NotFound", `You have no environment variable ${name}; runnel env list (GET /v1/env) shows the ones you have.`, { kind: "environment variable", id: name });
    }
  }

  /** The values of the owner's variables of these names, secrets opened; a name the owner has not set is left out. */
  async resolve(ownerId: string, names: readonly string[]): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    if (names.length === 0) return out;
    for (const envVar of await this.options.store.findEnvVars(ownerId, [...names])) {
      out[envVar.name] = envVar.secret ? this.options.secrets.open(envVar.value) : envVar.value;
    }
    return out;
  }
}
