import { lazy, Suspense } from "react";
import { Loading } from "./Loading";

export interface CodeEditorProps {
  value: string;
  onChange?: (value: string) => void;
  /** Names the editor for screen readers (there is no <label> for a contenteditable). */
  ariaLabel: string;
  readOnly?: boolean;
  /** Extra completions (e.g. `steps.trigger`, `$.send.http`), offered beside the JavaScript ones. */
  completions?: Array<{ label: string; detail?: string; type?: string }>;
  minHeight?: string;
}

// CodeMirror is large: it loads with the first page that shows an editor, not with the console.
const CodeEditorImpl = lazy(() => import("./CodeEditorImpl"));

/** A JavaScript/TypeScript editor (CodeMirror 6), loaded on first use. */
export function CodeEditor(props: CodeEditorProps) {
  return (
    <Suspense fallback={<Loading label="Loading the editor…" />}>
      <CodeEditorImpl {...props} />
    </Suspense>
  );
}
