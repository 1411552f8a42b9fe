/**
 * A strict reader of Prometheus' text exposition format (0.0.4), for tests:
 * every line is a HELP, a TYPE, or a sample of a family declared before it,
 * names and labels are well formed, values are numbers, and a histogram's
 * buckets rise to a +Inf bucket equal to its _count. Throws naming the line.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  help: string;
  samples: Sample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+(-?\\d+))?$`);
const LABEL = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"\s*(?:,|$)/;
const SUFFIXES: Record<Family["type"], string[]> = { counter: ["", "_total"], gauge: [""], untyped: [""], histogram: ["_bucket", "_sum", "_count"], summary: ["", "_sum", "_count"] };

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const lines = text.split("\n");
  if (lines.at(-1) !== "") throw new Error("the exposition must end with a newline");
  lines.forEach((line, index) => {
    const where = `line ${index + 1} (${JSON.stringify(line)})`;
    if (line === "") return;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, "HELP" | "TYPE", string, string];
      if (!new RegExp(`^${NAME}$`).test(name)) throw new Error(`${where}: bad metric name`);
      const family = families.get(name) ?? { name, type: "untyped" as const, help: "", samples: [] };
      if (kind === "TYPE") {
        if (!(rest in SUFFIXES)) throw new Error(`${where}: unknown type`);
        if (family.samples.length > 0) throw new Error(`${where}: TYPE after samples`);
        family.type = rest as Family["type"];
      } else family.help = rest;
      families.set(name, family);
      return;
    }
    if (line.startsWith("#")) return;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`${where}: not a sample line`);
    const [, name, labelText, valueText] = match as unknown as [string, string, string | undefined, string];
    // Prometheus reads values with Go's ParseFloat, which takes NaN and Inf in any case (prom-client writes "Nan").
    const special = valueText.toLowerCase();
    const value = special === "+inf" || special === "inf" ? Infinity : special === "-inf" ? -Infinity : special === "nan" ? NaN : Number(valueText);
    if (Number.isNaN(value) && special !== "nan") throw new Error(`${where}: bad value`);
    const labels: Record<string, string> = {};
    let restLabels = labelText ?? "";
    while (restLabels.trim() !== "") {
      const label = LABEL.exec(restLabels);
      if (!label) throw new Error(`${where}: bad labels`);
      labels[label[1]!] = label[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
      restLabels = restLabels.slice(label[0].length);
    }
    const family = [...families.values()].find((candidate) => SUFFIXES[candidate.type].some((suffix) => `${candidate.name}${suffix}` === name));
    if (!family) throw new Error(`${where}: a sample of no declared family`);
    family.samples.push({ name, labels, value });
  });
  for (const family of families.values()) if (family.type === "histogram") checkHistogram(family);
  return families;
}

function checkHistogram(family: Family): void {
  const series = new Map<string, Sample[]>();
  for (const sample of family.samples) {
    if (!sample.name.endsWith("_bucket")) continue;
    const { le, ...rest } = sample.labels;
    if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
    const key = labelKey(rest);
    series.set(key, [...(series.get(key) ?? []), sample]);
  }
  for (const [key, buckets] of series) {
    let last = -Infinity;
    for (const bucket of buckets) {
      if (bucket.value < last) throw new Error(`${family.name}${key}: buckets must not fall`);
      last = bucket.value;
    }
    const inf = buckets.find((bucket) => bucket.labels.le === "+Inf");
    const count = family.samples.find((sample) => sample.name === `${family.name}_count` && labelKey(sample.labels) === key);
    if (!inf || !count || inf.value !== count.value) throw new Error(`${family.name}${key}: the +Inf bucket must equal _count`);
  }
}

function labelKey(labels: Record<string, string>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
}

/** The value of the sample of `name` with these labels (others ignored), or undefined. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    const sample = family.samples.find((candidate) => candidate.name === name && Object.entries(labels).every(([label, value]) => candidate.labels[label] === value));
    if (sample) return sample.value;
  }
  return undefined;
}
