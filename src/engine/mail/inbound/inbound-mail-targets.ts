import type { DeployedSource } from "../../../domain/sources.js";
import type { Store } from "../../../store/store.js";
import type { SourcesService } from "../../sources/service.js";
import { INBOUND_MAIL_KEY } from "./inbound-address.js";
import type { InboundMailTargets } from "./inbound-mail-server.js";

/**
 * The sources inbound mail reaches: an active source whose endpoint token is
 * the address's and whose component has the key `email-new-email` (any
 * other source's token is not a mailbox: its code does not expect mail).
 * The message is its `run`'s event, run like a "run now" (the run time limit).
 */
export function inboundMailTargets(store: Store, sources: SourcesService): InboundMailTargets {
  return {
    async mailSource(token: string): Promise<DeployedSource | null> {
      const source = await store.findSourceByEndpoint(token);
      if (!source || !source.active) return null;
      const { validated } = await sources.componentOf(source);
      return validated.key === INBOUND_MAIL_KEY ? source : null;
    },
    async deliver(source, event) {
      const result = await sources.runNow(source.ownerId, source.id, event);
      return result.ok;
    },
  };
}
