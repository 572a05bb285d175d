/**
 * Five-field cron expressions (minute, hour, day of month, month, day of week), matched against a
 * UTC minute. Each field is `*` or a comma-separated list of values, ranges (`a-b`) and steps
 * (`*\/n`, `a-b/n`, `a/n`: from a to the field's end); day of week counts 0 (or 7) as Sunday. As
 * in cron, when both the day of month and the day of week are restricted, a day matching either
 * matches (a field that starts with `*` does not restrict). Matching is a few array reads: the schedules are evaluated every few seconds in
 * processes that serve requests.
 */
export interface CronSchedule {
  readonly expression: string;
  /** Whether the expression fires in the UTC minute that holds `at`. */
  matches(at: Date): boolean;
}

interface Field {
  min: number;
  max: number;
}

const FIELDS: readonly Field[] = [
  { min: 0, max: 59 }, // minute
  { min: 0, max: 23 }, // hour
  { min: 1, max: 31 }, // day of month
  { min: 1, max: 12 }, // month
  { min: 0, max: 7 }, // day of week (7 is Sunday too)
];

const PART = /^(?:(\*)|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/;

/** Parses a five-field expression; throws an Error naming what is wrong. */
export function parseCron(expression: string): CronSchedule {
  const texts = expression.trim().split(/\s+/);
  if (texts.length !== 5) throw new Error(`cron expression ${JSON.stringify(expression)} must have 5 fields, not ${texts.length}`);
  const [minute, hour, dayOfMonth, month, dayOfWeek] = texts.map((text, i) => parseField(expression, text, FIELDS[i]!));
  if (dayOfWeek!.allowed[7]) dayOfWeek!.allowed[0] = true;
  // As in Vixie cron, a field that starts with `*` (`*`, `*/2`) does not restrict the day.
  const domRestricted = !texts[2]!.startsWith('*');
  const dowRestricted = !texts[4]!.startsWith('*');
  return {
    expression,
    matches(at: Date): boolean {
      if (!minute!.allowed[at.getUTCMinutes()] || !hour!.allowed[at.getUTCHours()] || !month!.allowed[at.getUTCMonth() + 1]) return false;
      const dom = dayOfMonth!.allowed[at.getUTCDate()] === true;
      const dow = dayOfWeek!.allowed[at.getUTCDay()] === true;
      return domRestricted && dowRestricted ? dom || dow : dom && dow;
    },
  };
}

function parseField(expression: string, text: string, field: Field): { allowed: boolean[] } {
  const allowed = new Array<boolean>(field.max + 1).fill(false);
  const fail = (why: string) => new Error(`cron expression ${JSON.stringify(expression)}: ${JSON.stringify(text)} ${why}`);
  for (const part of text.split(',')) {
    const m = PART.exec(part);
    if (!m) throw fail('is not *, a number, a range or a step');
    const step = m[4] === undefined ? 1 : Number(m[4]);
    let from = field.min;
    let to = field.max;
    if (m[2] !== undefined) {
      from = Number(m[2]);
      // `a/n` runs from a to the field's end; `a` alone is that one value.
      to = m[3] !== undefined ? Number(m[3]) : m[4] !== undefined ? field.max : from;
    }
    if (from < field.min || to > field.max || from > to) throw fail(`is outside ${field.min}-${field.max}`);
    if (step < 1) throw fail('has a step below 1');
    for (let v = from; v <= to; v += step) allowed[v] = true;
  }
  return { allowed };
}
