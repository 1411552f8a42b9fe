import { XMLParser, XMLValidator } from "fast-xml-parser";

export default {
  key: "helper_functions-xml-to-json",
  name: "XML to JSON",
  description: "Parses XML text into a JSON object, attributes included.",
  version: "0.1.0",
  type: "action",
  props: {
    input: {
      type: "string",
      label: "XML",
      description: "The XML text, such as `{{steps.fetch.$return_value}}`.",
    },
    attributes: {
      type: "boolean",
      label: "Keep attributes",
      description: "Keep element attributes, as keys starting with the attribute prefix.",
      default: true,
      optional: true,
    },
    attributePrefix: {
      type: "string",
      label: "Attribute prefix",
      description: "What attribute names start with in the result, so that they differ from child elements.",
      default: "@_",
      optional: true,
    },
    parseValues: {
      type: "boolean",
      label: "Parse numbers and booleans",
      description: 'Turn "12" into 12 and "true" into true. Off: every value stays text.',
      default: true,
      optional: true,
    },
  },
  async run({ $ }) {
    const verdict = XMLValidator.validate(this.input);
    if (verdict !== true) {
      const { msg, line, col } = verdict.err;
      throw new Error(`Prop "input" is not well-formed XML: ${msg} (line ${line}, column ${col}).`);
    }
    const parseValues = this.parseValues ?? true;
    const parser = new XMLParser({
      ignoreAttributes: !(this.attributes ?? true),
      attributeNamePrefix: this.attributePrefix ?? "@_",
      parseTagValue: parseValues,
      parseAttributeValue: parseValues,
      // The DOCTYPE's entities are expanded, but fast-xml-parser leaves one whose value names
      // another as written, so nested expansion ("billion laughs") cannot blow up.
      processEntities: true,
      htmlEntities: false,
    });
    const json = parser.parse(this.input);
    $.export("$summary", `Parsed XML with root ${Object.keys(json).filter((key) => !key.startsWith("?")).join(", ") || "(none)"}`);
    return json;
  },
};
