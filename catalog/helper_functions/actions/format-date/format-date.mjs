import { assertTimeZone, isoInZone, zonedParts } from "../../../common/zoned-time.mjs";
import { toEpochMs } from "../../../common/date-input.mjs";

const FORMATS = [
  { value: "iso", label: "ISO 8601 in UTC: 2026-11-27T09:00:00.000Z" },
  { value: "iso_zoned", label: "ISO 8601 in the time zone: 2026-11-27T10:00:00+01:00" },
  { value: "date", label: "Date: 2026-11-27" },
  { value: "time", label: "Time: 10:00:00" },
  { value: "datetime", label: "Date and time: 2026-11-27 10:00:00" },
  { value: "http", label: "HTTP date (RFC 7231, always GMT): Fri, 27 Nov 2026 09:00:00 GMT" },
  { value: "long", label: "In words, in the language: Friday, 27 November 2026 at 10:00:00 CET" },
  { value: "short", label: "Short, in the language: 27/11/2026, 10:00" },
  { value: "epoch_seconds", label: "Epoch seconds: 1795770000" },
  { value: "epoch_ms", label: "Epoch milliseconds: 1795770000000" },
  { value: "custom", label: "Custom pattern (the Pattern prop)" },
];

const TOKENS = /\[([^\]]*)\]|YYYY|YY|MMMM|MMM|MM|M|DD|D|dddd|ddd|HH|H|hh|h|mm|m|ss|s|SSS|A|a|ZZ|Z/g;
const pad = (value, width = 2) => String(value).padStart(width, "0");

function assertLocale(locale) {
  try {
    return new Intl.DateTimeFormat(locale).resolvedOptions().locale;
  } catch {
    throw new Error(`Prop "locale": ${JSON.stringify(locale)} is not a language tag. Use one such as en-US, en-GB, de-DE or pt-PT.`);
  }
}

function name(ms, locale, timeZone, field, style) {
  return new Intl.DateTimeFormat(locale, { timeZone, [field]: style }).format(new Date(ms));
}

/** Fills a pattern such as "DD/MM/YYYY HH:mm"; text in [brackets] is kept as it is. */
function formatPattern(ms, pattern, timeZone, locale) {
  const p = zonedParts(ms, timeZone);
  const hour12 = p.hour % 12 === 0 ? 12 : p.hour % 12;
  const values = {
    YYYY: pad(p.year, 4),
    YY: pad(p.year % 100),
    MMMM: () => name(ms, locale, timeZone, "month", "long"),
    MMM: () => name(ms, locale, timeZone, "month", "short"),
    MM: pad(p.month),
    M: String(p.month),
    DD: pad(p.day),
    D: String(p.day),
    dddd: () => name(ms, locale, timeZone, "weekday", "long"),
    ddd: () => name(ms, locale, timeZone, "weekday", "short"),
    HH: pad(p.hour),
    H: String(p.hour),
    hh: pad(hour12),
    h: String(hour12),
    mm: pad(p.minute),
    m: String(p.minute),
    ss: pad(p.second),
    s: String(p.second),
    SSS: pad(((ms % 1000) + 1000) % 1000, 3),
    A: p.hour < 12 ? "AM" : "PM",
    a: p.hour < 12 ? "am" : "pm",
    Z: p.offset,
    ZZ: p.offset.replace(":", ""),
  };
  return pattern.replace(TOKENS, (token, literal) => {
    if (literal !== undefined) return literal;
    const value = values[token];
    return typeof value === "function" ? value() : value;
  });
}

export default {
  key: "helper_functions-format-date",
  name: "Format date and time",
  description: "Formats a date (ISO text or epoch seconds/milliseconds) in a time zone: ISO 8601, date, time, words in your language, epoch, or a pattern of your own.",
  version: "0.1.0",
  type: "action",
  props: {
    input: {
      type: "any",
      label: "Date",
      description: "ISO 8601 text (2026-11-27T09:00:00Z), or epoch seconds or milliseconds (a number below 100,000,000,000 is seconds). Left empty: now.",
      optional: true,
    },
    format: {
      type: "string",
      label: "Format",
      description: "How to write the date.",
      options: FORMATS,
      default: "iso_zoned",
      optional: true,
    },
    pattern: {
      type: "string",
      label: "Pattern",
      description:
        "For the Custom format: YYYY YY, MMMM MMM MM M (month), DD D, dddd ddd (weekday), HH H (24 h), hh h (12 h), mm m, ss s, SSS, A a (AM/PM), Z ZZ (offset); [text] is kept as it is. Example: dddd DD MMMM YYYY [at] HH:mm.",
      optional: true,
    },
    timeZone: {
      type: "string",
      label: "Time zone",
      description: "The IANA time zone to show the date in, such as UTC, Europe/Lisbon or America/New_York.",
      default: "UTC",
      optional: true,
    },
    locale: {
      type: "string",
      label: "Language",
      description: "For month and weekday names and the in-words formats: a language tag such as en-US, en-GB or de-DE.",
      default: "en-US",
      optional: true,
    },
  },
  async run({ $ }) {
    const ms = toEpochMs(this.input, "input");
    const timeZone = this.timeZone ?? "UTC";
    assertTimeZone(timeZone, "timeZone");
    const locale = assertLocale(this.locale ?? "en-US");
    const format = this.format ?? "iso_zoned";
    let result;
    switch (format) {
      case "iso":
        result = new Date(ms).toISOString();
        break;
      case "iso_zoned":
        result = isoInZone(ms, timeZone);
        break;
      case "date":
        result = formatPattern(ms, "YYYY-MM-DD", timeZone, locale);
        break;
      case "time":
        result = formatPattern(ms, "HH:mm:ss", timeZone, locale);
        break;
      case "datetime":
        result = formatPattern(ms, "YYYY-MM-DD HH:mm:ss", timeZone, locale);
        break;
      case "http":
        result = new Date(ms).toUTCString();
        break;
      case "long":
        result = new Intl.DateTimeFormat(locale, { timeZone, dateStyle: "full", timeStyle: "long" }).format(new Date(ms));
        break;
      case "short":
        result = new Intl.DateTimeFormat(locale, { timeZone, dateStyle: "short", timeStyle: "short" }).format(new Date(ms));
        break;
      case "epoch_seconds":
        result = Math.floor(ms / 1000);
        break;
      case "epoch_ms":
        result = ms;
        break;
      case "custom":
        if (typeof this.pattern !== "string" || this.pattern === "") throw new Error('Prop "pattern" is required when "format" is "custom": give one such as DD/MM/YYYY HH:mm.');
        result = formatPattern(ms, this.pattern, timeZone, locale);
        break;
      default:
        throw new Error(`Prop "format" must be one of ${FORMATS.map((f) => f.value).join(", ")}; got ${JSON.stringify(format)}.`);
    }
    $.export("$summary", `Formatted as ${result}`);
    return result;
  },
};
