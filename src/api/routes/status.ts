import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { DeliveryQueueStats } from "../../domain/processes.js";
import { ForbiddenError } from "../../domain/errors.js";
import type { Store } from "../../store/store.js";
import { principalOf } from "../request-context.js";
import { errorResponses, ErrorBodySchema } from "../schemas/common.js";
import { StatusSchema, toStatusView } from "../schemas/status.js";

/** `GET /v1/status` (admins): the installation's processes and its queues, for `runnel status` and the console. */
export const statusRoutes: FastifyPluginAsyncTypebox<{
  store: Store;
  instanceId: string | null;
  /** The job queue's depth (BullMQ's jobs on a shared queue); absent: the store's delivery rows. */
  queueStats?: (now: number) => Promise<DeliveryQueueStats>;
}> = async (app, { store, instanceId, queueStats }) => {
  const readQueue = queueStats ?? ((now: number) => store.deliveryQueueStats(now));
  app.get(
    "/status",
    {
      schema: {
        tags: ["operations"],
        summary: "The processes of this installation (role, version, heartbeat, load) and the delivery queue's depth (admins only)",
        response: { 200: StatusSchema, ...errorResponses, 403: ErrorBodySchema },
      },
    },
    async (request) => {
      if (!principalOf(request).user.isAdmin) throw new ForbiddenError("Only an admin can see the status of the installation. Use the admin's key.");
      const now = Date.now();
      const [processes, queue] = await Promise.all([store.listProcesses(), readQueue(now)]);
      return toStatusView(processes, queue, instanceId, now);
    },
  );
};
