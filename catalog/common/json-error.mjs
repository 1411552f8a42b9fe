// Where a JSON text goes wrong, in words: V8's own messages name a position only
// sometimes, so the text is scanned again (only after JSON.parse refused it).

function describeChar(char) {
  if (char === "\n") return "a line break";
  if (char === "'") return "a single quote (JSON strings take double quotes)";
  if (char === '"') return "'\"'";
  return `"${char}"`;
}

/** { position, line, column, problem } for a text JSON.parse refused. */
export function locateJsonError(text) {
  const n = text.length;
  let i = 0;
  const fail = (problem) => {
    throw { position: i, problem };
  };
  const ws = () => {
    while (i < n && " \t\n\r".includes(text[i])) i++;
  };
  const string = () => {
    i++;
    while (i < n) {
      const char = text[i];
      if (char === '"') {
        i++;
        return;
      }
      if (char === "\\") {
        const escape = text[i + 1];
        if (escape === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail("a \\u escape needs four hexadecimal digits");
          i += 6;
        } else if (escape !== undefined && '"\\/bfnrt'.includes(escape)) {
          i += 2;
        } else {
          fail(`"\\${escape ?? ""}" is not an escape JSON knows`);
        }
      } else if (char < " ") {
        fail("a line break or control character inside a string (write it as \\n)");
      } else {
        i++;
      }
    }
    fail("the text ends inside a string (a closing \" is missing)");
  };
  const number = () => {
    const pattern = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
    pattern.lastIndex = i;
    const match = pattern.exec(text);
    if (!match || match[0] === "" || match[0] === "-") fail("a number is not written correctly");
    i += match[0].length;
  };
  const value = () => {
    ws();
    if (i >= n) fail("the text ends where a value was expected");
    const char = text[i];
    if (char === "{") return object();
    if (char === "[") return array();
    if (char === '"') return string();
    if (char === "-" || (char >= "0" && char <= "9")) return number();
    for (const word of ["true", "false", "null"]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    fail(`${describeChar(char)} where a value was expected`);
  };
  const object = () => {
    i++;
    ws();
    if (text[i] === "}") return void i++;
    for (;;) {
      ws();
      if (text[i] !== '"') fail(i >= n ? "the text ends inside an object (a } is missing)" : `${describeChar(text[i])} where a property name in double quotes was expected`);
      string();
      ws();
      if (text[i] !== ":") fail('a ":" was expected after the property name');
      i++;
      value();
      ws();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "}") return void i++;
      fail(i >= n ? "the text ends inside an object (a } is missing)" : `${describeChar(text[i])} where "," or "}" was expected`);
    }
  };
  const array = () => {
    i++;
    ws();
    if (text[i] === "]") return void i++;
    for (;;) {
      value();
      ws();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "]") return void i++;
      fail(i >= n ? "the text ends inside a list (a ] is missing)" : `${describeChar(text[i])} where "," or "]" was expected`);
    }
  };
  try {
    value();
    ws();
    if (i < n) fail(`${describeChar(text[i])} after the end of the JSON value`);
    return null;
  } catch (found) {
    if (!found || typeof found.position !== "number") throw found;
    const before = text.slice(0, found.position);
    const line = before.split("\n").length;
    const column = found.position - before.lastIndexOf("\n");
    return { position: found.position, line, column, problem: found.problem };
  }
}
