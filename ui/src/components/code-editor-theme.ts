import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { Compartment, type Extension } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { tags } from "@lezer/highlight";

/**
 * The editor's colours in dark mode. basicSetup brings a light highlight
 * style only, which is unreadable on the console's dark background; the
 * console follows the system's light/dark, so the editor does too.
 * (@codemirror/language and @lezer/highlight come with `codemirror`.)
 */
const darkChrome = EditorView.theme(
  {
    "&": { color: "#e6edf3", backgroundColor: "#171b21" },
    ".cm-content": { caretColor: "#e6edf3" },
    ".cm-cursor, .cm-dropCursor": { borderLeftColor: "#e6edf3" },
    "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection": { backgroundColor: "#2c4a6e" },
    ".cm-activeLine": { backgroundColor: "#1f242c" },
    ".cm-activeLineGutter": { backgroundColor: "#1f242c" },
    ".cm-gutters": { backgroundColor: "#171b21", color: "#9da7b3", border: "none" },
    ".cm-matchingBracket, .cm-nonmatchingBracket": { backgroundColor: "#3a4350" },
    ".cm-tooltip": { backgroundColor: "#1f242c", color: "#e6edf3", border: "1px solid #363d47" },
    ".cm-tooltip-autocomplete > ul > li[aria-selected]": { backgroundColor: "#2c4a6e", color: "#e6edf3" },
    ".cm-panels": { backgroundColor: "#1f242c", color: "#e6edf3" },
    ".cm-searchMatch": { backgroundColor: "#4d3f12" },
  },
  { dark: true },
);

const darkHighlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.modifier, tags.operatorKeyword, tags.controlKeyword], color: "#ff7b72" },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: "#a5d6ff" },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: "#79c0ff" },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: "#8b949e", fontStyle: "italic" },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: "#d2a8ff" },
  { tag: [tags.typeName, tags.className, tags.namespace], color: "#ffa657" },
  { tag: [tags.propertyName, tags.definition(tags.variableName)], color: "#e6edf3" },
  { tag: tags.invalid, color: "#ff8a80" },
]);

const dark: Extension = [darkChrome, syntaxHighlighting(darkHighlight)];

function prefersDark(): boolean {
  return typeof window.matchMedia === "function" && window.matchMedia("(prefers-color-scheme: dark)").matches;
}

/**
 * The theme as an extension that follows the system: `extension` goes into
 * the editor's state, `watch(view)` switches it when the system changes and
 * returns the function that stops watching.
 */
export function systemTheme(): { extension: Extension; watch: (view: EditorView) => () => void } {
  const compartment = new Compartment();
  return {
    extension: compartment.of(prefersDark() ? dark : []),
    watch: (view) => {
      if (typeof window.matchMedia !== "function") return () => {};
      const query = window.matchMedia("(prefers-color-scheme: dark)");
      const follow = () => view.dispatch({ effects: compartment.reconfigure(query.matches ? dark : []) });
      query.addEventListener("change", follow);
      return () => query.removeEventListener("change", follow);
    },
  };
}
