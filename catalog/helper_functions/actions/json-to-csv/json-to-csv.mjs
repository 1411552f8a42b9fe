import { stringify } from "csv-stringify/sync";

export default {
  key: "helper_functions-json-to-csv",
  name: "JSON to CSV",
  description: "Turns a list of objects (or of lists) into CSV text, one row per item, with a header row of the column names.",
  version: "0.1.0",
  type: "action",
  props: {
    data: {
      type: "any",
      label: "Data",
      description: "A list of objects, such as `{{steps.fetch.$return_value.items}}`, or JSON text of one. Lists of lists are rows as they are.",
    },
    columns: {
      type: "string[]",
      label: "Columns",
      description: "The columns, in order. Left empty: every key the objects have, in the order first seen.",
      optional: true,
    },
    header: {
      type: "boolean",
      label: "Header row",
      description: "Start with a row of the column names.",
      default: true,
      optional: true,
    },
    delimiter: {
      type: "string",
      label: "Delimiter",
      description: "The character between fields.",
      default: ",",
      optional: true,
    },
  },
  async run({ $ }) {
    const rows = listOfRows(this.data);
    const objects = rows.length > 0 && !Array.isArray(rows[0]);
    const columns = this.columns?.length ? this.columns : objects ? keysInOrder(rows) : undefined;
    const csv = stringify(rows, {
      delimiter: this.delimiter ?? ",",
      header: Boolean(this.header ?? true) && columns !== undefined,
      columns,
      cast: { object: (value) => JSON.stringify(value), boolean: (value) => String(value), date: (value) => value.toISOString() },
    });
    $.export("$summary", `Converted ${rows.length} row${rows.length === 1 ? "" : "s"} to CSV`);
    return csv;
  },
};

/** The data as a list whose items are all objects or all lists; anything else is the prop's error. */
function listOfRows(data) {
  let value = data;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch (error) {
      throw new Error(`Prop "data" is text that is not JSON (${error.message}); give a list of objects.`);
    }
  }
  if (!Array.isArray(value)) throw new Error(`Prop "data" must be a list of objects; got ${describe(value)}.`);
  const arrays = value.filter((item) => Array.isArray(item)).length;
  const objects = value.filter((item) => item !== null && typeof item === "object" && !Array.isArray(item)).length;
  if (arrays !== value.length && objects !== value.length) {
    const bad = value.findIndex((item) => item === null || typeof item !== "object");
    throw new Error(`Prop "data" must hold only objects (or only lists); item ${bad === -1 ? 0 : bad} is ${describe(value[bad === -1 ? 0 : bad])}.`);
  }
  return value;
}

function keysInOrder(rows) {
  const keys = new Set();
  for (const row of rows) for (const key of Object.keys(row)) keys.add(key);
  return [...keys];
}

function describe(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
