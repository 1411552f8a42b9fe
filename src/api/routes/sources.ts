import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type, type Static } from "@sinclair/typebox";
import { parsePageRequest, toPage } from "../../domain/paging.js";
import type { EmitterEventStats } from "../../domain/activity.js";
import type { DeployedSource } from "../../domain/sources.js";
import type { Principal } from "../../engine/accounts.js";
import type { SourcesService } from "../../engine/sources/service.js";
import { principalOf } from "../request-context.js";
import { checkOwnWorkspace } from "../workspace.js";
import { DataSchema, errorResponses, PageQuerySchema, PageSchema, WorkspaceParams } from "../schemas/common.js";
import { DeployBodySchema, SourceSchema, toSourceView, UpdateBodySchema } from "../schemas/sources.js";

export interface SourcesRoutesOptions {
  sources: SourcesService;
  endpointUrl: (source: DeployedSource) => string | null;
}

const IdParams = Type.Object({ id: Type.String({ description: "dc_… or the name slug" }) });

/** Deploy, read, update and delete sources. */
export const sourcesRoutes: FastifyPluginAsyncTypebox<SourcesRoutesOptions> = async (app, { sources, endpointUrl }) => {
  const view = async (source: DeployedSource, stats?: Map<string, EmitterEventStats>) => {
    const events = stats ?? (await sources.eventStats(source.ownerId, [source.id]));
    const ownedBy = await sources.owningWorkflow(source.ownerId, source.id);
    return toSourceView(source, (await sources.componentOf(source)).validated, endpointUrl(source), ownedBy, events.get(source.id));
  };

  app.post(
    "/sources",
    {
      schema: {
        tags: ["sources"],
        summary: "Deploy a source: runs its deploy and activate hooks",
        body: DeployBodySchema,
        response: { 200: DataSchema(SourceSchema), ...errorResponses },
      },
    },
    async (request) => ({ data: await view(await sources.deploy(principalOf(request).user.id, request.body)) }),
  );

  app.get(
    "/sources/:id",
    { schema: { tags: ["sources"], summary: "A deployed source", params: IdParams, response: { 200: DataSchema(SourceSchema), ...errorResponses } } },
    async (request) => ({ data: await view(await sources.get(principalOf(request).user.id, request.params.id)) }),
  );

  app.put(
    "/sources/:id",
    {
      schema: {
        tags: ["sources"],
        summary: "Update code, props, name or active: runs deactivate then activate; the id stays. A workflow's own trigger answers 409: change the workflow",
        params: IdParams,
        body: UpdateBodySchema,
        response: { 200: DataSchema(SourceSchema), ...errorResponses },
      },
    },
    async (request) => ({ data: await view(await sources.updateUnowned(principalOf(request).user.id, request.params.id, request.body)) }),
  );

  app.delete(
    "/sources/:id",
    { schema: { tags: ["sources"], summary: "Delete a source: runs its deactivate hook. A workflow's own trigger answers 409: delete the workflow", params: IdParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (request, reply) => {
      await sources.removeUnowned(principalOf(request).user.id, request.params.id);
      return reply.code(204).send(null);
    },
  );

  const listOwn = async (request: { principal: Principal | null; query: Static<typeof PageQuerySchema> }) => {
    const ownerId = principalOf(request).user.id;
    const slice = await sources.list(ownerId, parsePageRequest(request.query));
    // One grouped query for the whole page's event counts.
    const stats = await sources.eventStats(ownerId, slice.items.map((source) => source.id));
    return toPage({ items: await Promise.all(slice.items.map((source) => view(source, stats))), totalCount: slice.totalCount }, (item) => item.id);
  };

  app.get(
    "/users/me/sources",
    {
      schema: { tags: ["sources"], summary: "Your sources, newest first", querystring: PageQuerySchema, response: { 200: PageSchema(SourceSchema), ...errorResponses } },
    },
    listOwn,
  );

  // The hosted API lists a workspace's sources here; a user's one workspace holds exactly their sources.
  app.get(
    "/orgs/:org_id/sources",
    {
      schema: {
        tags: ["sources"],
        summary: "Your workspace's sources (o_…, from /users/me/workspaces): the same list as /users/me/sources",
        params: WorkspaceParams,
        querystring: PageQuerySchema,
        response: { 200: PageSchema(SourceSchema), ...errorResponses },
      },
    },
    async (request) => {
      checkOwnWorkspace(principalOf(request), request.params.org_id);
      return listOwn(request);
    },
  );
};
