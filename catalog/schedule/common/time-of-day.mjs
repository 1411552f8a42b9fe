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
