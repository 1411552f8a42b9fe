// Cron expressions (5 fields, or 6 with seconds first), matched against wall-clock fields.
// Our own parser: the catalog may only bundle a few packages, and matching in a time zone
// needs the fields, not a "next run" in the server's zone.

const FIELDS = [
  { name: "second", min: 0, max: 59 },
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], first: 1 },
  { name: "day of week", min: 0, max: 7, names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"], first: 0 },
];

function parseNumber(text, field, where) {
  const upper = text.toUpperCase();
  if (field.names) {
    const index = field.names.indexOf(upper);
    if (index >= 0) return index + field.first;
  }
  if (!/^\d+$/.test(text)) throw new Error(`${where} has "${text}", which is not a number${field.names ? " or a name such as " + field.names[0] : ""}.`);
  const value = Number(text);
  if (value < field.min || value > field.max) throw new Error(`${where} has ${value}; the ${field.name} takes ${field.min}-${field.max}.`);
  return value;
}

function parseField(text, field, where) {
  const allowed = new Set();
  for (const item of text.split(",")) {
    const [range, stepText, extra] = item.split("/");
    if (extra !== undefined || range === "") throw new Error(`${where} has "${item}", which is not a value, a range or a step.`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) === 0) throw new Error(`${where} has the step "/${stepText}"; a step is a whole number of at least 1.`);
      step = Number(stepText);
    }
    let from;
    let to;
    if (range === "*" || range === "?") {
      from = field.min;
      to = field.max;
    } else if (range.includes("-")) {
      const [a, b] = range.split("-");
      from = parseNumber(a, field, where);
      to = parseNumber(b, field, where);
      if (from > to) throw new Error(`${where} has the range ${range}, which runs backwards.`);
    } else {
      from = parseNumber(range, field, where);
      to = stepText !== undefined ? field.max : from;
    }
    for (let value = from; value <= to; value += step) allowed.add(value);
  }
  return allowed;
}

/**
 * Parses a cron expression; throws a sentence that names the field at fault
 * (prefixed with the prop's name, for the deploy's error message).
 */
export function parseCron(expression, propName = "cron") {
  if (typeof expression !== "string" || expression.trim() === "") {
    throw new Error(`Prop "${propName}" must be a cron expression such as "0 9 * * 1-5" (minute hour day-of-month month day-of-week).`);
  }
  const texts = expression.trim().split(/\s+/);
  if (texts.length !== 5 && texts.length !== 6) {
    throw new Error(`Prop "${propName}": a cron expression has 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; "${expression}" has ${texts.length}.`);
  }
  const hasSeconds = texts.length === 6;
  const fields = hasSeconds ? FIELDS : FIELDS.slice(1);
  const sets = texts.map((text, index) => parseField(text, fields[index], `Prop "${propName}": field ${index + 1} (${fields[index].name})`));
  if (!hasSeconds) sets.unshift(new Set([0]));
  const [seconds, minutes, hours, days, months, weekdays] = sets;
  if (weekdays.has(7)) weekdays.add(0);
  const dayText = texts[texts.length - 3];
  const weekdayText = texts[texts.length - 1];
  return {
    expression: texts.join(" "),
    hasSeconds,
    seconds,
    minutes,
    hours,
    days,
    months,
    weekdays,
    // Classic cron: when both day fields are restricted, either one matching is enough.
    daysRestricted: dayText !== "*" && dayText !== "?",
    weekdaysRestricted: weekdayText !== "*" && weekdayText !== "?",
  };
}

/** Whether wall-clock fields (from zonedParts) are a time the schedule names. */
export function cronMatches(cron, parts) {
  if (!cron.seconds.has(parts.second) || !cron.minutes.has(parts.minute) || !cron.hours.has(parts.hour) || !cron.months.has(parts.month)) return false;
  const dayOk = cron.days.has(parts.day);
  const weekdayOk = cron.weekdays.has(parts.weekday);
  if (cron.daysRestricted && cron.weekdaysRestricted) return dayOk || weekdayOk;
  return dayOk && weekdayOk;
}
