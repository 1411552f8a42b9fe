/** A count option such as `-n`: a whole number within the range the API pages by. */
export function parseCount(raw: string, flag: string, max = 100): number {
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1 || count > max) throw new Error(`${flag} must be a whole number from 1 to ${max}; got "${raw}".`);
  return count;
}

/** A JSON option such as `--event`: parsed, or a message that says what to fix. */
export function parseJsonOption(raw: string, flag: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch (error) {
    throw new Error(`${flag} must be JSON, like ${flag} '{"hello":"world"}': ${(error as Error).message}.`);
  }
}
