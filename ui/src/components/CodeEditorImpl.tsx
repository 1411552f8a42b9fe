import { autocompletion, completeFromList, type Completion } from "@codemirror/autocomplete";
import { javascript, javascriptLanguage } from "@codemirror/lang-javascript";
import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { basicSetup } from "codemirror";
import { useEffect, useRef } from "react";
import { cspNonce } from "../csp";
import type { CodeEditorProps } from "./CodeEditor";
import { systemTheme } from "./code-editor-theme";

/** The CodeMirror view behind CodeEditor; default export for React.lazy. */
export default function CodeEditorImpl({ value, onChange, ariaLabel, readOnly = false, completions = [], minHeight = "12rem" }: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;

  useEffect(() => {
    if (!host.current) return;
    const theme = systemTheme();
    const extra: Completion[] = completions.map((item) => ({ label: item.label, detail: item.detail, type: item.type ?? "variable" }));
    const editor = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value,
        extensions: [
          basicSetup,
          javascript({ typescript: true }),
          javascriptLanguage.data.of({ autocomplete: completeFromList(extra) }),
          autocompletion(),
          // The console's CSP allows only styles carrying this page's nonce (src/api/console-assets.ts).
          EditorView.cspNonce.of(cspNonce()),
          EditorView.editable.of(!readOnly),
          EditorState.readOnly.of(readOnly),
          EditorView.contentAttributes.of({ "aria-label": ariaLabel }),
          theme.extension,
          EditorView.theme({ ".cm-content, .cm-gutter": { minHeight }, ".cm-scroller": { fontFamily: "var(--mono)" } }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) onChangeRef.current?.(update.state.doc.toString());
          }),
        ],
      }),
    });
    // A long line scrolls sideways: the scroller takes keyboard focus so that it can be scrolled without a mouse.
    editor.scrollDOM.tabIndex = 0;
    view.current = editor;
    const stopWatching = theme.watch(editor);
    return () => {
      stopWatching();
      editor.destroy();
      view.current = null;
    };
    // The editor is made once; later `value`s are applied below without losing the cursor.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  return <div className="code-editor" ref={host} />;
}
