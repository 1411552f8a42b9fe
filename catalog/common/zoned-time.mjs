// Wall-clock time in an IANA time zone, through Intl (no time zone database of our own).

const formatters = new Map();

function formatterFor(timeZone) {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      weekday: "short",
      timeZoneName: "longOffset",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Throws a sentence naming the prop when `timeZone` is not a zone Intl knows. */
export function assertTimeZone(timeZone, propName) {
  if (typeof timeZone !== "string" || timeZone.trim() === "") {
    throw new Error(`Prop "${propName}" must be a time zone name, such as UTC, Europe/Lisbon or America/New_York.`);
  }
  try {
    formatterFor(timeZone);
  } catch {
    throw new Error(`Prop "${propName}": "${timeZone}" is not a time zone this server knows. Use an IANA name such as UTC, Europe/Lisbon or America/New_York.`);
  }
}

const WEEKDAYS = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

/** The wall-clock fields of an instant in a zone; `weekday` 0 is Sunday; `offset` like "+01:00" ("Z" never: UTC is "+00:00"). */
export function zonedParts(epochMs, timeZone) {
  const parts = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(epochMs))) parts[part.type] = part.value;
  const offset = parts.timeZoneName === "GMT" ? "+00:00" : parts.timeZoneName.slice(3);
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAYS[parts.weekday],
    offset,
  };
}

const pad = (value, width = 2) => String(value).padStart(width, "0");

/** ISO 8601 with the zone's offset: "2026-11-27T09:00:00+01:00". */
export function isoInZone(epochMs, timeZone) {
  const p = zonedParts(epochMs, timeZone);
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}${p.offset}`;
}
