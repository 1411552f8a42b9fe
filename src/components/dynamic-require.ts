/**
 * Packages are bundled at deploy time from the import strings esbuild can
 * read. A `require(name)` with a name computed at run time is left as it is,
 * and in the runner it can only fail (there is no node_modules, and the
 * runner may read nothing but its bundle). This guard, put at the top of
 * every bundle the server makes, turns that failure into a message that says
 * why and what to do. Node's own modules still load through it.
 */
const GUARD = `var require = ((load) => {
  const guarded = function require(id) {
    try {
      return load(id);
    } catch (error) {
      const code = error && error.code;
      if (typeof id !== "string" || (code !== "MODULE_NOT_FOUND" && code !== "ERR_ACCESS_DENIED") || load("node:module").isBuiltin(id)) throw error;
      throw Object.assign(
        new Error(\`Cannot find package "\${id}": it is required with a name computed at run time, and such dynamic requires of packages are not supported, because packages are bundled when the component is deployed. Import it with a static string, such as require("\${id}") or import x from "\${id}", and deploy again.\`),
        { code: "MODULE_NOT_FOUND" },
      );
    }
  };
  return Object.assign(guarded, { resolve: load.resolve, cache: load.cache, main: load.main, extensions: load.extensions });
})(require);
`;

/** How many lines the guard puts before the bundle's code (its source map is shifted by them). */
export const DYNAMIC_REQUIRE_GUARD_LINES = GUARD.split("\n").length - 1;

/** The bundle with the guard after its "use strict" prologue, if any (a statement before it would turn strict mode off). */
export function withDynamicRequireGuard(code: string): string {
  const prologue = /^(?:(["'])use strict\1;?[ \t]*\n?)?/.exec(code)![0];
  return `${prologue}${GUARD}${code.slice(prologue.length)}`;
}
