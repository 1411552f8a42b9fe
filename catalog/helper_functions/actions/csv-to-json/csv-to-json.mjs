import { parse } from "csv-parse/sync";

export default {
  key: "helper_functions-csv-to-json",
  name: "CSV to JSON",
  description: "Parses CSV text into a list of objects named by the header row (or a list of lists without one).",
  version: "0.1.0",
  type: "action",
  props: {
    csv: {
      type: "string",
      label: "CSV",
      description: "The CSV text, such as `{{steps.trigger.event.body}}`.",
    },
    header: {
      type: "boolean",
      label: "First row is a header",
      description: "Name each row's fields by the first row. Off: each row is a list of its fields.",
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
    trim: {
      type: "boolean",
      label: "Trim fields",
      description: "Remove spaces around each field.",
      default: false,
      optional: true,
    },
  },
  async run({ $ }) {
    let rows;
    try {
      rows = parse(this.csv, {
        columns: this.header ?? true,
        delimiter: this.delimiter ?? ",",
        trim: Boolean(this.trim),
        skip_empty_lines: true,
        bom: true,
      });
    } catch (error) {
      throw new Error(`Prop "csv" is not CSV this action can read: ${error.message}`);
    }
    $.export("$summary", `Parsed ${rows.length} row${rows.length === 1 ? "" : "s"}`);
    return rows;
  },
};
