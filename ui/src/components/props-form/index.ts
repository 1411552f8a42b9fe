/**
 * The props form: inputs generated from a component's `configurable_props`,
 * for deploying a source and for a workflow step's action. Controlled: keep a
 * `PropsDraft` in state (`initialDraft`), render `<PropsForm>`, and on submit
 * `checkDraft` gives the values to send (or the errors to show); place the
 * API's own validation error with `errorsFromApi`. See PropsForm.tsx.
 */
export { PropsForm, type PropsFormProps } from "./PropsForm";
export { checkDraft, earlierValues, initialDraft, toDraft, type CheckedProps } from "./draft-values";
export { errorsFromApi } from "./api-errors";
export { labelOf, takesInput } from "./prop-kinds";
export type { ConfigurableProp, DraftValue, LoadOptions, OptionsPage, OptionsRequest, PropErrors, PropOption, PropsDraft, TimerDraft } from "./types";
