import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { SourcesService } from "../../engine/sources/service.js";
import { principalOf } from "../request-context.js";
import { DataSchema, errorResponses } from "../schemas/common.js";
import { DraftPropOptionsBodySchema, PropOptionsSchema } from "../schemas/prop-options.js";
import { ComponentInputFields, ComponentSchema, toComponentView } from "../schemas/sources.js";

/** Saved components: validate and store code, read it back with its configurable props. */
export const componentsRoutes: FastifyPluginAsyncTypebox<{ sources: SourcesService }> = async (app, { sources }) => {
  app.post(
    "/components",
    {
      schema: {
        tags: ["components"],
        summary: "Save a component (code, or a URL to it); answers with its configurable props",
        body: Type.Object(ComponentInputFields, { additionalProperties: false }),
        response: { 200: DataSchema(ComponentSchema), ...errorResponses },
      },
    },
    async (request) => {
      const { component, validated } = await sources.saveComponent(principalOf(request).user.id, request.body);
      return { data: toComponentView(component, validated) };
    },
  );

  app.get(
    "/components/:idOrKey",
    {
      schema: {
        tags: ["components"],
        summary: "A saved component by id (sc_…) or key (the newest with that key)",
        params: Type.Object({ idOrKey: Type.String() }),
        response: { 200: DataSchema(ComponentSchema), ...errorResponses },
      },
    },
    async (request) => {
      const { component, validated } = await sources.getComponent(principalOf(request).user.id, request.params.idOrKey);
      return { data: toComponentView(component, validated) };
    },
  );

  app.post(
    "/components/props/options",
    {
      schema: {
        tags: ["components"],
        summary:
          "A prop's options before deploy (the deploy form): its static options, or what its async options method returns for this page and query, run in the sandbox with the earlier props' values; propDefinitions resolved as deploy does",
        body: DraftPropOptionsBodySchema,
        response: { 200: DataSchema(PropOptionsSchema), ...errorResponses },
      },
    },
    async (request) => {
      const { component, prop, configured_props, page, prev_context, prevContext, query } = request.body;
      const options = await sources.draftPropOptions(principalOf(request).user.id, component, prop, {
        configuredProps: configured_props,
        page,
        prevContext: prev_context ?? prevContext,
        query,
      });
      return { data: options };
    },
  );
};
