import { Cron } from "croner";

/** The fields of a cron expression, by how many it has: 5 (minute first), 6 (seconds first) or 7 (a year last). */
const FIELDS: Record<number, readonly CronField[]> = {};

interface CronField {
  name: string;
  takes: string;
}

const SECOND: CronField = { name: "second", takes: "0-59" };
const MINUTE: CronField = { name: "minute", takes: "0-59" };
const HOUR: CronField = { name: "hour", takes: "0-23" };
const DAY_OF_MONTH: CronField = { name: "day of month", takes: "1-31 (or L for the last day)" };
const MONTH: CronField = { name: "month", takes: "1-12 or JAN-DEC" };
const DAY_OF_WEEK: CronField = { name: "day of week", takes: "0-7 (0 and 7 are Sunday) or SUN-SAT" };
const YEAR: CronField = { name: "year", takes: "1-9999" };
FIELDS[5] = [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK];
FIELDS[6] = [SECOND, ...FIELDS[5]];
FIELDS[7] = [...FIELDS[6], YEAR];

const FORMS = "each field a value, *, a list (1,15), a range (1-5) or a step (*/10)";

/**
 * Why a cron expression is not valid, in words that name the field at fault
 * and where it is (`field 3 of 5, day of month, at character 5`); null when
 * it is valid. The scheduler's own parser decides; this only says where.
 */
export function explainCronProblem(expression: string): string | null {
  const parserSays = parseProblem(expression);
  if (parserSays === null) return null;
  const parts = expression.trim().split(/\s+/);
  const fields = FIELDS[parts.length];
  if (!fields) {
    return `"${expression}" has ${parts.length} field${parts.length === 1 ? "" : "s"}; a cron expression has 5: minute hour day-of-month month day-of-week (like "0 * * * *" for every hour), or 6 with seconds first.`;
  }
  // Each field alone among wildcards: the first that the parser refuses is the one at fault.
  for (const [index, part] of parts.entries()) {
    const alone = parts.map((other, at) => (at === index ? other : "*")).join(" ");
    if (parseProblem(alone) === null) continue;
    const field = fields[index]!;
    const column = columnOf(expression, index);
    return `"${expression}": field ${index + 1} of ${parts.length} (${field.name}, at character ${column}) is "${part}"; the ${field.name} takes ${field.takes}, ${FORMS}.`;
  }
  // Every field is fine alone; together they never match (or the parser found something else).
  return `"${expression}" is not a valid cron expression: ${parserSays.replace(/^CronPattern:\s*/, "")}`;
}

function parseProblem(expression: string): string | null {
  try {
    new Cron(expression, { paused: true });
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Where the field at `index` starts in the expression as written, counting from 1. */
function columnOf(expression: string, index: number): number {
  const pattern = /\S+/g;
  let match: RegExpExecArray | null;
  let at = 0;
  while ((match = pattern.exec(expression)) !== null) {
    if (at === index) return match.index + 1;
    at += 1;
  }
  return 1;
}

/**
 * Why `zone` is not a time zone a cron schedule can run in (null when it is):
 * an IANA name such as "Europe/Paris" or "UTC", as the runtime's Intl knows
 * them (the same tables croner converts with). Offsets ("+01:00") are refused:
 * they do not follow daylight saving time, which is what a zone is for.
 */
export function explainTimeZoneProblem(zone: string): string | null {
  const name = zone.trim();
  const fix = 'use an IANA time zone name such as "Europe/Paris", "America/New_York" or "UTC"';
  if (name === "") return `timezone is empty; ${fix}, or leave it out for UTC.`;
  if (/^[+-]|^(GMT|UTC)[+-]/i.test(name)) return `timezone "${zone}" is an offset, not a time zone (an offset does not follow daylight saving time); ${fix}.`;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return null;
  } catch {
    return `timezone "${zone}" is not a time zone this server knows; ${fix}.`;
  }
}
