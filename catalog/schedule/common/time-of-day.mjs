/** "09:00" or "17:30:15" → { hour, minute, second }; throws a sentence naming the prop. */
export function parseTimeOfDay(text, propName) {
  const match = typeof text === "string" ? /^\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*$/.exec(text) : null;
  const hour = match ? Number(match[1]) : NaN;
  const minute = match ? Number(match[2]) : NaN;
  const second = match?.[3] !== undefined ? Number(match[3]) : 0;
  if (!match || hour > 23 || minute > 59 || second > 59) {
    throw new Error(`Prop "${propName}": ${JSON.stringify(text)} is not a time of day. Write it as HH:MM in 24-hour time, such as 09:00 or 17:30 (HH:MM:SS for seconds).`);
  }
  return { hour, minute, second };
}

/** A cron expression for a time of day (with a seconds field only when the time has seconds). */
export function cronAt({ hour, minute, second }, dayOfWeek = "*") {
  return second === 0 ? `${minute} ${hour} * * ${dayOfWeek}` : `${second} ${minute} ${hour} * * ${dayOfWeek}`;
}

const only = (set) => (set.size === 1 ? [...set][0] : null);
const pad = (value) => String(value).padStart(2, "0");

/**
 * The time of day a parsed cron fires at, as "HH:MM" ("HH:MM:SS" with a seconds field),
 * or null when it fires at more than one time a day, or only on some days of the month
 * or months (a daily or weekly schedule names a single time on whole days).
 */
export function timeOfDayOf(cron) {
  const [second, minute, hour] = [only(cron.seconds), only(cron.minutes), only(cron.hours)];
  if (second === null || minute === null || hour === null || cron.daysRestricted || cron.months.size !== 12) return null;
  return cron.hasSeconds ? `${pad(hour)}:${pad(minute)}:${pad(second)}` : `${pad(hour)}:${pad(minute)}`;
}
