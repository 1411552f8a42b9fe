import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type, type Static } from "@sinclair/typebox";
import type { WorkflowVersion } from "../../domain/workflow-versions.js";
import type { Engine } from "../../engine/create-engine.js";
import { maskSealed } from "../../engine/secrets.js";
import { principalOf } from "../request-context.js";
import { errorResponses } from "../schemas/common.js";

const WorkflowVersionSchema = Type.Object(
  {
    version: Type.Integer({ description: "1 for the workflow as created, one more at each update." }),
    current: Type.Boolean({ description: "true: the version that runs now." }),
    deployment_id: Type.String({ description: "The d_… the workflow had while this version was current (original_context.deployment_id of its errors)." }),
    saved_at_ms: Type.Integer(),
    steps: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        component_id: Type.Union([Type.String(), Type.Null()], { description: "The saved code the step ran (never changed in place); null for a built-in action." }),
        key: Type.Union([Type.String(), Type.Null()]),
        props: Type.Record(Type.String(), Type.Unknown(), { description: "As saved; secret values masked." }),
      }),
    ),
  },
  { title: "WorkflowVersion" },
);
type WorkflowVersionView = Static<typeof WorkflowVersionSchema>;

const VersionsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "How many, newest first (default 20)." })),
    before: Type.Optional(Type.Integer({ minimum: 1, description: "Only versions older than this number (the next page: the last version of the previous one)." })),
  },
  { additionalProperties: false },
);

/**
 * A workflow's saved versions (each save of its steps is one): what a run's
 * `workflow_version` names, and what a replay with `"with_code": "failed_run"`
 * runs. Kept: the last 20, and older ones while a listed run ran them.
 */
export const workflowVersionsRoutes: FastifyPluginAsyncTypebox<{ engine: Engine }> = async (app, { engine }) => {
  app.get(
    "/workflows/:id/versions",
    {
      schema: {
        tags: ["workflows"],
        summary: "The workflow's kept versions, newest first: number, when saved, the steps as saved",
        params: Type.Object({ id: Type.String() }),
        querystring: VersionsQuery,
        response: { 200: Type.Object({ data: Type.Array(WorkflowVersionSchema), current_version: Type.Integer() }), ...errorResponses },
      },
    },
    async (request) => {
      const { limit, before } = request.query;
      const { workflow, versions } = await engine.workflows.versions(principalOf(request).user.id, request.params.id, { limit: limit ?? 20, before });
      const current = workflow.version ?? 1;
      return { data: versions.map((version) => toVersionView(version, current)), current_version: current };
    },
  );
};

function toVersionView(version: WorkflowVersion, current: number): WorkflowVersionView {
  return {
    version: version.version,
    current: version.version === current,
    deployment_id: version.deploymentId,
    saved_at_ms: version.savedAt,
    steps: version.steps.map((step) => ({ id: step.id, name: step.name, component_id: step.componentId, key: step.key, props: maskSealed(step.props) })),
  };
}
