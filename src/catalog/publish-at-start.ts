import type { Logger } from "pino";
import type { RegistryService } from "../engine/registry-service.js";
import { loadCatalog } from "./load-catalog.js";

/**
 * Start-up: Runnel's catalog into the registry (only versions the store
 * lacks). Whatever goes wrong is logged and the server starts anyway: a
 * missing catalog costs the catalog, not the server.
 */
export async function publishCatalogAtStart(registry: RegistryService, logger: Logger): Promise<void> {
  try {
    await registry.publishCatalog(await loadCatalog());
  } catch (error) {
    logger.error({ err: error }, `Runnel's catalog was not published (the server runs without its new versions): ${(error as Error).message}`);
  }
}
