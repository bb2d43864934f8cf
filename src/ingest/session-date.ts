/** LoCoMo's session timestamps, read as the episodes' occurredAt (ingest/locomo.ts). Pure. */
import { canonicalText } from './normalize.ts';
import { MON, monthOf, ORD, validDate, yearFrom } from './time-vocabulary.ts';

const SESSION_TIME_RE = /^(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?\s*(?:on\s+|,\s*)?/i;
const SESSION_DATES: readonly RegExp[] = [
  /^(\d{4})-(\d{1,2})-(\d{1,2})$/,
  new RegExp(`^(\\d{1,2})${ORD}\\s+(?:of\\s+)?${MON},?\\s+(\\d{4})$`, 'i'),
  new RegExp(`^${MON}\\s+(\\d{1,2})${ORD},?\\s+(\\d{4})$`, 'i'),
];

/**
 * LoCoMo-style session timestamps ("1:56 pm on 8 May, 2023", "10:37 am on 27 June, 2023") → ISO UTC.
 * The time is optional (midnight when absent); 12 am is midnight, 12 pm is noon; without am/pm the hour is
 * read as 24-hour. Null when the string is not such a timestamp or names an impossible date or time.
 */
export function parseSessionDate(s: string): string | null {
  let rest = canonicalText(s);
  let hours = 0;
  let minutes = 0;
  let seconds = 0;
  const t = SESSION_TIME_RE.exec(rest);
  if (t) {
    hours = Number(t[1]);
    minutes = Number(t[2]);
    seconds = t[3] === undefined ? 0 : Number(t[3]);
    const meridiem = t[4]?.toLowerCase().replace(/\./g, '');
    if (meridiem) {
      if (hours < 1 || hours > 12) return null;
      hours = (hours % 12) + (meridiem === 'pm' ? 12 : 0);
    }
    if (hours > 23 || minutes > 59 || seconds > 59) return null;
    rest = rest.slice(t[0].length).trim();
  }
  let day: number | null = null;
  for (const [i, re] of SESSION_DATES.entries()) {
    const m = re.exec(rest);
    if (!m) continue;
    if (i === 0) day = validDate(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    else if (i === 1)
      day = yearFrom(m[3]) === null ? null : validDate(Number(m[3]), monthOf(m[2]) ?? -1, Number(m[1]));
    else day = yearFrom(m[3]) === null ? null : validDate(Number(m[3]), monthOf(m[1]) ?? -1, Number(m[2]));
    break;
  }
  if (day === null) return null;
  return new Date(day + ((hours * 60 + minutes) * 60 + seconds) * 1000).toISOString();
}
