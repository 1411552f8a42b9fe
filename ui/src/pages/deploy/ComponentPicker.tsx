import { useMutation } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { fieldError } from "../../api/client";
import type { ComponentView } from "../../api/types";
import { CodeEditor } from "../../components/CodeEditor";
import { ErrorMessage } from "../../components/ErrorMessage";
import { FormField } from "../../components/FormField";
import { PendingButton } from "../../components/PendingButton";
import { componentByKey, saveComponent } from "./api";
import { RegistrySearch } from "./RegistrySearch";

export type PickMethod = "key" | "url" | "code" | "file";

const METHODS: Array<{ value: PickMethod; label: string }> = [
  { value: "key", label: "Registry key" },
  { value: "url", label: "URL" },
  { value: "code", label: "Paste code" },
  { value: "file", label: "Upload a file" },
];

export interface ComponentPickerProps {
  /** From the deploy URL (`?key=` or `?url=`). */
  initialKey?: string | undefined;
  initialUrl?: string | undefined;
  onLoaded: (component: ComponentView) => void;
}

/**
 * Step 1 of deploying: the component, from a registry key, a URL, pasted
 * code or a file read in the browser (sent as code). Saving it validates and
 * bundles it on the server, which answers its configurable props.
 */
export function ComponentPicker({ initialKey, initialUrl, onLoaded }: ComponentPickerProps) {
  const [method, setMethod] = useState<PickMethod>(initialUrl ? "url" : "key");
  const [key, setKey] = useState(initialKey ?? "");
  const [url, setUrl] = useState(initialUrl ?? "");
  const [code, setCode] = useState("");
  const [typeScript, setTypeScript] = useState(false);
  const [file, setFile] = useState<{ name: string; text: string } | null>(null);
  const [fileError, setFileError] = useState<string | null>(null);
  const legendId = useId();

  const load = useMutation({
    mutationFn: async (how: PickMethod | { picked: string }): Promise<ComponentView> => {
      if (typeof how === "object") return componentByKey(how.picked);
      switch (how) {
        case "key":
          return componentByKey(key.trim());
        case "url":
          return saveComponent({ component_url: url.trim() });
        case "code":
          return saveComponent(typeScript ? { component_code: code, filename: "component.ts" } : { component_code: code });
        case "file":
          if (!file) throw new Error("Choose a file first.");
          return saveComponent({ component_code: file.text, filename: file.name });
      }
    },
    onSuccess: onLoaded,
  });

  // A deploy URL with a key loads that component at once: reading the registry changes nothing.
  // A URL is only filled in: fetching an address someone put in a link waits for the user's click.
  const autoLoaded = useRef(false);
  useEffect(() => {
    if (autoLoaded.current || !initialKey || initialUrl) return;
    autoLoaded.current = true;
    load.mutate("key");
  }, [initialKey, initialUrl, load]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    load.mutate(method);
  };

  const readFile = async (chosen: File | undefined) => {
    setFileError(null);
    setFile(null);
    if (!chosen) return;
    // The API takes up to a few MB of code; a bigger file is surely not a component.
    if (chosen.size > 5 * 1024 * 1024) {
      setFileError(`${chosen.name} is ${(chosen.size / 1024 / 1024).toFixed(1)} MB: a component's code should be far smaller. Choose its source file.`);
      return;
    }
    setFile({ name: chosen.name, text: await chosen.text() });
  };

  const canLoad = method === "key" ? key.trim() !== "" : method === "url" ? url.trim() !== "" : method === "code" ? code.trim() !== "" : file !== null;
  const apiFieldError = (field: string) => fieldError(load.error, field);
  const shownAtField = ["component_url", "component_code", "filename"].some((field) => apiFieldError(field) !== null);

  return (
    <form className="card deploy-step" onSubmit={submit} aria-labelledby={legendId}>
      <h2 id={legendId}>1. The component</h2>
      <fieldset className="method-choice">
        <legend>Where is it?</legend>
        {METHODS.map((choice) => (
          <label key={choice.value} className="method-option">
            <input type="radio" name="method" value={choice.value} checked={method === choice.value} onChange={() => setMethod(choice.value)} />
            {choice.label}
          </label>
        ))}
      </fieldset>

      {method === "key" ? (
        <>
          <FormField label="Component key" description="A key of the registry: Runnel's catalog (search it below) or a component you published (runnel publish), like http-new-requests.">
            {(f) => <input id={f.id} aria-describedby={f.describedBy} aria-invalid={f.invalid} value={key} spellCheck={false} onChange={(event) => setKey(event.target.value)} />}
          </FormField>
          <RegistrySearch
            onPick={(picked) => {
              // Picked from the list: loaded at once (reading the registry changes nothing), the key shown above.
              setKey(picked);
              load.mutate({ picked });
            }}
          />
        </>
      ) : null}

      {method === "url" ? (
        <FormField label="Component URL" description="An http(s) address of the component's raw code. The server fetches it." error={apiFieldError("component_url")}>
          {(f) => (
            <input id={f.id} aria-describedby={f.describedBy} aria-invalid={f.invalid} type="url" value={url} spellCheck={false} placeholder="https://…/component.mjs" onChange={(event) => setUrl(event.target.value)} />
          )}
        </FormField>
      ) : null}

      {method === "code" ? (
        <div className="field">
          {/* The editor is named by its aria-label; this is the visible caption. */}
          <span className="field-label" aria-hidden="true">
            Component code
          </span>
          <CodeEditor ariaLabel="Component code" value={code} onChange={setCode} minHeight="14rem" />
          <label className="inline-check">
            <input type="checkbox" checked={typeScript} onChange={(event) => setTypeScript(event.target.checked)} /> TypeScript
          </label>
          {apiFieldError("component_code") ? <p className="field-error">{apiFieldError("component_code")}</p> : null}
        </div>
      ) : null}

      {method === "file" ? (
        <FormField label="Component file" description="A .js, .mjs, .cjs or .ts file: read here in the browser and sent as code." error={fileError ?? apiFieldError("component_code")}>
          {(f) => (
            <input
              id={f.id}
              aria-describedby={f.describedBy}
              aria-invalid={f.invalid}
              type="file"
              accept=".js,.mjs,.cjs,.ts,.mts,.cts,text/javascript,application/javascript"
              onChange={(event) => void readFile(event.target.files?.[0])}
            />
          )}
        </FormField>
      ) : null}
      {method === "file" && file ? <p className="muted">{`${file.name}: ${file.text.length.toLocaleString()} characters read.`}</p> : null}

      {load.error && !shownAtField ? <ErrorMessage error={load.error} title="The component could not be loaded." /> : null}
      <PendingButton type="submit" className="primary" pending={load.isPending} pendingText="Loading the component…" disabled={!canLoad}>
        Load the component
      </PendingButton>
    </form>
  );
}
