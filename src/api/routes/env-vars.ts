import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { EnvVarsService } from "../../engine/env-vars.js";
import { principalOf } from "../request-context.js";
import { DataSchema, errorResponses, PageSchema } from "../schemas/common.js";
import { EnvVarBodySchema, EnvVarParams, EnvVarSchema, toEnvVarView } from "../schemas/env-vars.js";

/**
 * Your environment variables: values that workflow steps receive where a prop
 * says `{{process.env.NAME}}` (code never reads the process's environment).
 */
export const envVarsRoutes: FastifyPluginAsyncTypebox<{ envVars: EnvVarsService }> = async (app, { envVars }) => {
  app.put(
    "/env/:name",
    {
      schema: {
        tags: ["env"],
        summary: "Set an environment variable (created or replaced); a secret one is sealed and its value never shown again",
        params: EnvVarParams,
        body: EnvVarBodySchema,
        response: { 200: DataSchema(EnvVarSchema), ...errorResponses },
      },
    },
    async (request) => ({ data: toEnvVarView(await envVars.set(principalOf(request).user.id, request.params.name, request.body)) }),
  );

  app.get(
    "/env",
    {
      schema: {
        tags: ["env"],
        summary: "All your environment variables, by name (secret ones without their value)",
        response: { 200: PageSchema(EnvVarSchema), ...errorResponses },
      },
    },
    async (request) => {
      const all = (await envVars.list(principalOf(request).user.id)).map(toEnvVarView);
      // One page of all of them: a user keeps at most a few hundred.
      return { page_info: { total_count: all.length, count: all.length, start_cursor: all[0]?.name ?? null, end_cursor: all.at(-1)?.name ?? null }, data: all };
    },
  );

  app.delete(
    "/env/:name",
    { schema: { tags: ["env"], summary: "Remove an environment variable; steps that read it fail with a ConfigurationError naming it", params: EnvVarParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (request, reply) => {
      await envVars.remove(principalOf(request).user.id, request.params.name);
      return reply.code(204).send(null);
    },
  );
};
