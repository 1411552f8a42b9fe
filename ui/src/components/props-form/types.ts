/**
 * The props form's shapes. A prop is one entry of a component's
 * `configurable_props`, as the API answers it (propDefinitions already
 * resolved by the server), so the form needs nothing of the component's code.
 */
import type { ConfigurableProp } from "../../../../src/domain/component-rules.js";

export type { ConfigurableProp };

/** A static or async option: a bare value, or a value with the label to show. */
export type PropOption = string | number | boolean | { label: string; value: unknown };

/** A timer's schedule as the form edits it: an interval in seconds, or a cron expression. */
export interface TimerDraft {
  mode: "interval" | "cron";
  interval: string;
  cron: string;
  /** A cron schedule's IANA time zone ("" for UTC). */
  timezone: string;
}

/**
 * What the user has typed or picked for one prop, before it is checked:
 * text for text-like inputs (a number is text until checked, an object is
 * JSON text), a boolean for a checkbox, a list for an array, a TimerDraft for
 * a timer. A prop with options holds the chosen option's value JSON-encoded
 * (a list of them for an array), so options of any JSON type round-trip.
 */
export type DraftValue = string | boolean | string[] | TimerDraft;

/** The form's state: one draft per prop name (absent: nothing given yet). */
export type PropsDraft = Record<string, DraftValue | undefined>;

/** Messages by prop name: the form's own checks, or the API's (see errorsFromApi). */
export type PropErrors = Record<string, string | undefined>;

/** One page of async options, as `/v1/…/props/options` answers it. */
export interface OptionsPage {
  options: PropOption[];
  context: unknown;
}

/** What the form asks when it needs a page of a prop's async options. */
export interface OptionsRequest {
  prop: string;
  /** 0 for the first page. */
  page: number;
  /** The `context` the previous page answered (null for the first page). */
  prevContext: unknown;
  /** What the user typed in the search box ("" for none). */
  query: string;
  /** The values of the props declared before this one that are valid so far. */
  configuredProps: Record<string, unknown>;
}

export type LoadOptions = (request: OptionsRequest, signal: AbortSignal) => Promise<OptionsPage>;
