export default {
  key: "helper_functions-compare-arrays",
  name: "Compare lists",
  description: "Compares two lists: what the second adds, what it no longer has, and what both have. Items are compared by value (objects too).",
  version: "0.1.0",
  type: "action",
  props: {
    array1: {
      type: "any",
      label: "First list",
      description: "The list before, such as `{{steps.yesterday.$return_value}}` (or JSON text of one).",
    },
    array2: {
      type: "any",
      label: "Second list",
      description: "The list after (or JSON text of one).",
    },
  },
  async run({ $ }) {
    const first = listFrom("array1", this.array1);
    const second = listFrom("array2", this.array2);
    const firstKeys = new Set(first.map(identity));
    const secondKeys = new Set(second.map(identity));
    const added = unique(second.filter((item) => !firstKeys.has(identity(item))));
    const removed = unique(first.filter((item) => !secondKeys.has(identity(item))));
    const common = unique(first.filter((item) => secondKeys.has(identity(item))));
    $.export("$summary", `${added.length} added, ${removed.length} removed, ${common.length} in both`);
    return { added, removed, common };
  },
};

function listFrom(name, value) {
  let list = value;
  if (typeof list === "string") {
    try {
      list = JSON.parse(list);
    } catch {
      throw new Error(`Prop "${name}" is text that is not a JSON list; give a list such as ["a", "b"].`);
    }
  }
  if (!Array.isArray(list)) throw new Error(`Prop "${name}" must be a list; got ${list === null ? "null" : typeof list}.`);
  return list;
}

/** An item's value as comparable text: objects with their keys sorted, so { a, b } and { b, a } are the same. */
function identity(item) {
  return JSON.stringify(item, (_key, value) =>
    value && typeof value === "object" && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : value,
  );
}

function unique(items) {
  const seen = new Set();
  return items.filter((item) => {
    const key = identity(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
