import { Ajv, type Options } from "ajv";
import addFormatsImport from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";

// ajv-formats is CommonJS with a default export; NodeNext sees the module object.
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

const shared: Options = {
  // Unknown fields are an error that names them, never silently dropped.
  removeAdditional: false,
  useDefaults: true,
  allErrors: false,
  strict: false,
};

/**
 * Three validators: JSON bodies keep their types exactly ("5" is not a
 * number), while query strings, path parameters and headers, which are
 * always text, are coerced to the declared types. A read's query drops the
 * parameters it does not know (clients of the hosted API send `org_id`,
 * `include` and the like on every call; the OpenAPI document lists the known
 * ones), while a write's stays strict, so a typo there is named, not ignored.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const forBodies = addFormats(new Ajv({ ...shared, coerceTypes: false }));
  const forText = addFormats(new Ajv({ ...shared, coerceTypes: "array" }));
  const forReadQueries = addFormats(new Ajv({ ...shared, coerceTypes: "array", removeAdditional: true }));
  return ({ schema, httpPart, method }) => {
    if (httpPart === "body") return forBodies.compile(schema as object);
    const read = method === "GET" || method === "HEAD";
    return (read && httpPart === "querystring" ? forReadQueries : forText).compile(schema as object);
  };
}
