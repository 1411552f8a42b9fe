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
 * Two validators: JSON bodies keep their types exactly ("5" is not a number),
 * while query strings, path parameters and headers, which are always text,
 * are coerced to the declared types.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const forBodies = addFormats(new Ajv({ ...shared, coerceTypes: false }));
  const forText = addFormats(new Ajv({ ...shared, coerceTypes: "array" }));
  return ({ schema, httpPart }) => (httpPart === "body" ? forBodies : forText).compile(schema as object);
}
