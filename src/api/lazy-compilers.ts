import fastJsonStringify from "fast-json-stringify";
import type { FastifySchemaCompiler, FastifySerializerCompiler } from "fastify";

/**
 * Fastify compiles every route's request validators and response
 * serializers when the server starts: about a second of CPU for this API's
 * hundred-odd routes, paid by every process start (a worker restarting, a
 * test's server) for routes most processes never serve. These compile each
 * schema on its first use instead; a route costs its compile (a few ms)
 * once, on its first request.
 */
type ValidatorFunction = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };

export function lazyValidators(compile: FastifySchemaCompiler<unknown>): FastifySchemaCompiler<unknown> {
  return (route) => {
    let validate: ValidatorFunction | undefined;
    const lazy: ValidatorFunction = (data, context) => {
      validate ??= compile(route) as ValidatorFunction;
      const result = validate(data, context);
      lazy.errors = validate.errors;
      return result;
    };
    // Fastify hands an Ajv function (which it knows by `schemaEnv`) the request as the value's parent, so that
    // coercion and defaults can replace a whole query or body: every compiled function here is Ajv's.
    lazy.schemaEnv = true;
    return lazy as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}

/** Fastify's own serializer (fast-json-stringify, with no shared schemas: the API adds none), built on first use. */
export function lazySerializers(): FastifySerializerCompiler<unknown> {
  return ({ schema }) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data) => (serialize ??= fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0]) as (data: unknown) => string)(data);
  };
}
