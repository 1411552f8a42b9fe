import { useMutation, useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { useState, type FormEvent } from "react";
import { queryClient } from "../../api/query-client";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { Loading } from "../../components/Loading";
import { PendingButton } from "../../components/PendingButton";
import { createWorkflow, getComponent, getWorkflow, updateWorkflow, workflowKeys, type WorkflowWritten } from "./api";
import { draftFromWorkflow, emptyDraft, moved, newStep, stepIndexOf, workflowBody, type StepDraft, type WorkflowDraft } from "./draft";
import { messageAt, problemOf } from "./problems";
import { StepEditor } from "./StepEditor";
import { TestRunPanel } from "./TestRunPanel";
import { TriggerEditor } from "./TriggerEditor";
import type { WorkflowListItem } from "./types";

/** /workflows/new: an empty draft with an HTTP trigger and one code step. */
export function NewWorkflowPage() {
  return <WorkflowEditor workflow={null} initial={emptyDraft()} />;
}

const editRoute = getRouteApi("/app/workflows/$id/edit");

/** /workflows/<id>/edit: the saved workflow, its code steps' code read from their components. */
export function EditWorkflowPage() {
  const { id } = editRoute.useParams();
  const loaded = useQuery({
    queryKey: [...workflowKeys.one(id), "editable"],
    queryFn: async ({ signal }) => {
      const workflow = await getWorkflow(id, signal);
      const codeSteps = workflow.steps.filter((step) => step.key === null && step.component_id !== null);
      const components = await Promise.all(codeSteps.map((step) => getComponent(step.component_id ?? "", signal)));
      const codes = Object.fromEntries(components.map((component) => [component.id, component.code]));
      return { workflow, draft: draftFromWorkflow(workflow, codes) };
    },
    // The form owns the draft once shown: a background refetch must not overwrite what is being typed.
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  if (loaded.isPending) return <Loading label="Loading the workflow…" />;
  if (loaded.isError) {
    return (
      <section aria-labelledby="edit-title">
        <h1 id="edit-title">Edit workflow</h1>
        <ErrorMessage error={loaded.error} title="Could not load the workflow." />
        <Link to="/workflows">Back to workflows</Link>
      </section>
    );
  }
  return <WorkflowEditor key={loaded.data.workflow.id} workflow={loaded.data.workflow} initial={loaded.data.draft} />;
}

function WorkflowEditor({ workflow, initial }: { workflow: WorkflowListItem | null; initial: WorkflowDraft }) {
  const navigate = useNavigate();
  const [draft, setDraft] = useState(initial);
  const [saved, setSaved] = useState<WorkflowDraft | null>(workflow ? initial : null);
  const [current, setCurrent] = useState(workflow);
  const [notice, setNotice] = useState<string | null>(null);

  const save = useMutation({
    mutationFn: async (): Promise<WorkflowWritten> => {
      const body = workflowBody(draft, saved);
      return current ? updateWorkflow(current.id, body) : createWorkflow(body);
    },
    onSuccess: async (written) => {
      void queryClient.invalidateQueries({ queryKey: workflowKeys.all });
      const warnings = written.warnings?.map((warning) => warning.message).join(" ") ?? "";
      if (!current) {
        // Editing from now on: the test run needs the saved workflow.
        await navigate({ to: "/workflows/$id/edit", params: { id: written.data.id }, replace: true });
        return;
      }
      setCurrent(written.data);
      setSaved(draft);
      setNotice(`Saved.${warnings ? ` ${warnings}` : ""}`);
    },
    onMutate: () => setNotice(null),
  });
  const problem = problemOf(save.error);
  const problemStep = stepIndexOf(problem?.field ?? null);

  const setStep = (index: number, step: StepDraft) => setDraft({ ...draft, steps: draft.steps.map((item, i) => (i === index ? step : item)) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const dirty = JSON.stringify(withoutUids(draft)) !== JSON.stringify(saved ? withoutUids(saved) : null);
  const title = current ? `Edit ${current.name}` : "New workflow";

  return (
    <section aria-labelledby="editor-title" className="workflow-editor">
      <div className="page-header">
        <h1 id="editor-title">{title}</h1>
        {current ? (
          <Link to="/workflows/$id" params={{ id: current.id }}>
            Runs of this workflow
          </Link>
        ) : null}
      </div>
      <form onSubmit={submit} noValidate>
        <FormField label="Name" error={messageAt(problem, "name")} required>
          {(f) => <input id={f.id} aria-describedby={f.describedBy} aria-invalid={f.invalid} value={draft.name} autoComplete="off" onChange={(event) => setDraft({ ...draft, name: event.target.value })} />}
        </FormField>
        <TriggerEditor
          trigger={draft.trigger}
          hasComponentTrigger={initial.trigger.kind === "component"}
          endpointUrl={current?.trigger.endpoint_url ?? null}
          problem={problem}
          onChange={(trigger) => setDraft({ ...draft, trigger })}
        />
        <h2>Steps</h2>
        {draft.steps.length === 0 ? <p className="muted">No steps yet: the workflow would only record its events. Add a step.</p> : null}
        {draft.steps.map((step, index) => (
          <StepEditor
            key={step.uid}
            step={step}
            index={index}
            count={draft.steps.length}
            earlierStepNames={draft.steps.slice(0, index).map((earlier) => earlier.name)}
            problem={problemStep === index ? problem : null}
            onChange={(next) => setStep(index, next)}
            onMove={(to) => setDraft({ ...draft, steps: moved(draft.steps, index, to) })}
            onRemove={() => setDraft({ ...draft, steps: draft.steps.filter((_, i) => i !== index) })}
          />
        ))}
        <div className="form-actions">
          <button type="button" onClick={() => setDraft({ ...draft, steps: [...draft.steps, newStep(draft.steps, "code")] })}>
            Add a code step
          </button>
          <button type="button" onClick={() => setDraft({ ...draft, steps: [...draft.steps, newStep(draft.steps, "action")] })}>
            Add a published action
          </button>
        </div>
        {problem ? (
          <ErrorMessage
            error={save.error}
            title={problemStep !== null ? `Not saved: step ${problemStep + 1} (${draft.steps[problemStep]?.name ?? ""}) needs a change.` : "Not saved."}
          />
        ) : null}
        {notice ? (
          <p className="notice" role="status">
            {notice}
          </p>
        ) : null}
        <div className="form-actions">
          <PendingButton type="submit" className="primary" pending={save.isPending} pendingText="Saving…">
            {current ? "Save changes" : "Create workflow"}
          </PendingButton>
          {current && dirty ? <span className="muted">Unsaved changes</span> : null}
        </div>
      </form>
      {current ? (
        <TestRunPanel workflowId={current.id} disabledReason={dirty ? "Save your changes first: a test run runs the saved workflow." : !current.active ? "The workflow is paused; activate it on its page to run it." : null} />
      ) : (
        <TestRunPanel workflowId={null} disabledReason="Create the workflow first; then try it here with a sample event." />
      )}
    </section>
  );
}

function withoutUids(draft: WorkflowDraft) {
  return { ...draft, steps: draft.steps.map(({ uid: _uid, version: _version, ...rest }) => rest) };
}
