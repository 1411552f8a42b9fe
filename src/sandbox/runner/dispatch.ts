/** Runs one call against a loaded component: run, a step, a hook, an options method, a method, or inspect. */
import type { RunnerCall } from "../protocol.js";
import { InvalidComponentError, isAppDeclaration, type Component, type PropDeclaration } from "./component.js";
import { addParsedBody } from "./http-body.js";
import { buildAppInstance, buildInstance, type Instance, type InstanceContext } from "./instance.js";
import { describeComponent, describeValue } from "./manifest.js";
import { resolveProp } from "./prop-definition.js";
import type { StepRecorder } from "./step-recorder.js";
import { runStep } from "./step.js";

export interface DispatchContext extends InstanceContext {
  /** What a step call's `$` records into; the runner makes one for every step call. */
  step?: StepRecorder | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `this` of an app's own options method: the component's instance of that app when it has one. */
function appInstanceFor(component: Component, instance: Instance, app: PropDeclaration): Instance {
  for (const [name, prop] of Object.entries(component.props)) {
    if (prop === app && isRecord(instance[name])) return instance[name];
  }
  return buildAppInstance(app, undefined);
}

async function callOptions(component: Component, instance: Instance, context: InstanceContext, propName: string, args: Record<string, unknown>): Promise<unknown> {
  const declared = component.props[propName];
  if (!declared || isAppDeclaration(declared)) throw new InvalidComponentError(`The component has no prop "${propName}" with options.`);
  const resolved = resolveProp(propName, declared);
  const options = resolved.declaration.options;
  if (Array.isArray(options)) return options;
  if (typeof options !== "function") throw new InvalidComponentError(`props.${propName} has no options method.`);
  if (!resolved.optionsFromApp || !resolved.app) return options.call(instance, { ...args });
  // The app's definition runs as the app (it calls the app's methods); inputValues map configured props to its arguments.
  const self = appInstanceFor(component, instance, resolved.app);
  const inputValues = typeof resolved.inputValues === "function" ? resolved.inputValues.call(instance, { ...context.props }) : resolved.inputValues;
  return options.call(self, { ...args, ...(isRecord(inputValues) ? inputValues : {}) });
}

async function callMethod(component: Component, instance: Instance, method: string, args: unknown[]): Promise<unknown> {
  const additionalProps = component.definition.additionalProps;
  if (method === "additionalProps" && typeof additionalProps === "function") {
    // Props may hold options methods: describe them as the manifest does.
    return describeValue(await additionalProps.apply(instance, args));
  }
  const fn = component.methods[method];
  if (!fn) throw new InvalidComponentError(`The component has no method "${method}".`);
  return fn.apply(instance, args);
}

export async function dispatch(component: Component, call: RunnerCall, context: DispatchContext): Promise<unknown> {
  if (call.kind === "inspect") return describeComponent(component);
  const instance = buildInstance(component, context);
  switch (call.kind) {
    case "run":
      if (!component.run) throw new InvalidComponentError("The component has no run method.");
      return component.run.call(instance, call.httpBody ? addParsedBody(call.event) : call.event);
    case "step": {
      const recorder = context.step;
      if (!recorder) throw new Error("A step call needs a step recorder.");
      return runStep(component, instance, call, { recorder, respond: (response, what) => context.respond(response, what) });
    }
    case "hook": {
      const hook = component.hooks[call.hook];
      return hook ? hook.call(instance) : undefined;
    }
    case "options":
      return callOptions(component, instance, context, call.prop, call.args);
    case "method":
      return callMethod(component, instance, call.method, call.args);
  }
}
