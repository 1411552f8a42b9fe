import type { CodeEditorProps } from "../../components/CodeEditor";

type Completion = NonNullable<CodeEditorProps["completions"]>[number];

/** What a step's code can call on `$` (docs/workflows.md). */
const HELPERS: Completion[] = [
  { label: "$.respond", detail: "({ status, headers, body }): answer the HTTP caller", type: "function" },
  { label: "$.flow.exit", detail: "(reason): end the run here, successfully", type: "function" },
  { label: "$.export", detail: "(name, value): a named export of this step", type: "function" },
  { label: "$.send.http", detail: "({ method, url, data, headers }): after the run", type: "function" },
  { label: "$.send.email", detail: "({ subject, text, html }): mail the owner", type: "function" },
  { label: "$.send.emit", detail: "({ raw_event }): the workflow's own events", type: "function" },
  { label: "$.send.sse", detail: "({ channel, payload }): to /v1/workflows/<id>/sse", type: "function" },
  { label: "$.send.s3", detail: "({ bucket, prefix, payload })", type: "function" },
  { label: "$.summary", detail: "the step's one-line summary", type: "property" },
  { label: '$.export("$summary", ', detail: "set the step's summary line", type: "function" },
  { label: "steps.trigger.event", detail: "the event that started the run", type: "variable" },
  { label: "steps.trigger.context", detail: "when and from where", type: "variable" },
];

/** The helpers, and `steps.<name>` for each step that runs before this one. */
export function stepCompletions(earlierStepNames: string[]): Completion[] {
  const steps = earlierStepNames.flatMap((name): Completion[] => [
    { label: `steps.${name}`, detail: "an earlier step", type: "variable" },
    { label: `steps.${name}.$return_value`, detail: `what ${name} returned`, type: "variable" },
  ]);
  return [...HELPERS, ...steps];
}
