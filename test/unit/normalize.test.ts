import { describe, expect, it } from 'vitest';
import { isMuninnError } from '../../src/domain/errors.ts';
import { canonicalText, findTimeExpression, resolveTime } from '../../src/ingest/normalize.ts';
import { parseSessionDate } from '../../src/ingest/session-date.ts';

/** A Monday afternoon: the first LoCoMo session timestamp. */
const ANCHOR = '2023-05-08T13:56:00Z';

const day = (d: string): string => `${d}T00:00:00.000Z`;

type Case = readonly [expr: string, from: string, to: string, source: 'STATED' | 'INFERRED'];

function expectResolved(expr: string, anchor: string, from: string, to: string, source: string): void {
  expect(resolveTime(expr, anchor)).toEqual({ validFrom: day(from), validTo: day(to), timeSource: source });
}

describe('resolveTime', () => {
  it('Given no expression, When resolved, Then validity starts at the anchor, open-ended and DEFAULTED', () => {
    expect(resolveTime(null, ANCHOR)).toEqual({
      validFrom: '2023-05-08T13:56:00.000Z',
      validTo: null,
      timeSource: 'DEFAULTED',
    });
    expect(resolveTime('   ', ANCHOR).timeSource).toBe('DEFAULTED');
  });

  it('Given text without a recognisable time phrase, When resolved, Then it is DEFAULTED to the anchor', () => {
    expect(resolveTime('at some point', ANCHOR)).toEqual({
      validFrom: '2023-05-08T13:56:00.000Z',
      validTo: null,
      timeSource: 'DEFAULTED',
    });
  });

  const relativeDays: Case[] = [
    ['yesterday', '2023-05-07', '2023-05-08', 'INFERRED'],
    ['today', '2023-05-08', '2023-05-09', 'INFERRED'],
    ['tonight', '2023-05-08', '2023-05-09', 'INFERRED'],
    ['last night', '2023-05-07', '2023-05-08', 'INFERRED'],
    ['tomorrow', '2023-05-09', '2023-05-10', 'INFERRED'],
    ['the day before yesterday', '2023-05-06', '2023-05-07', 'INFERRED'],
    ['3 days ago', '2023-05-05', '2023-05-06', 'INFERRED'],
    ['in 3 days', '2023-05-11', '2023-05-12', 'INFERRED'],
  ];
  it.each(relativeDays)(
    'Given "%s" on Monday 8 May 2023, When resolved, Then it is the day [%s, %s)',
    (expr, from, to, source) => expectResolved(expr, ANCHOR, from, to, source),
  );

  const relativePeriods: Case[] = [
    ['last week', '2023-05-01', '2023-05-08', 'INFERRED'],
    ['this week', '2023-05-08', '2023-05-15', 'INFERRED'],
    ['next week', '2023-05-15', '2023-05-22', 'INFERRED'],
    ['two weeks ago', '2023-04-24', '2023-05-01', 'INFERRED'],
    ['a couple of weeks ago', '2023-04-24', '2023-05-01', 'INFERRED'],
    ['in two weeks', '2023-05-22', '2023-05-29', 'INFERRED'],
    ['last weekend', '2023-05-06', '2023-05-08', 'INFERRED'],
    ['next weekend', '2023-05-20', '2023-05-22', 'INFERRED'],
    ['last month', '2023-04-01', '2023-05-01', 'INFERRED'],
    ['next month', '2023-06-01', '2023-07-01', 'INFERRED'],
    ['in a month', '2023-06-01', '2023-07-01', 'INFERRED'],
    ['2 months ago', '2023-03-01', '2023-04-01', 'INFERRED'],
    ['last year', '2022-01-01', '2023-01-01', 'INFERRED'],
    ['next year', '2024-01-01', '2025-01-01', 'INFERRED'],
    ['three years ago', '2020-01-01', '2021-01-01', 'INFERRED'],
  ];
  it.each(relativePeriods)(
    'Given "%s" on Monday 8 May 2023, When resolved, Then it is the bounded period [%s, %s)',
    (expr, from, to, source) => expectResolved(expr, ANCHOR, from, to, source),
  );

  const weekdays: Case[] = [
    ['last Friday', '2023-05-05', '2023-05-06', 'INFERRED'],
    ['last Monday', '2023-05-01', '2023-05-02', 'INFERRED'],
    ['next Monday', '2023-05-15', '2023-05-16', 'INFERRED'],
    ['next Wednesday', '2023-05-10', '2023-05-11', 'INFERRED'],
    ['this Friday', '2023-05-12', '2023-05-13', 'INFERRED'],
  ];
  it.each(weekdays)(
    'Given "%s" said on a Monday, When resolved, Then it is [%s, %s) (last = strictly before, next = strictly after)',
    (expr, from, to, source) => expectResolved(expr, ANCHOR, from, to, source),
  );

  const months: Case[] = [
    ['last May', '2022-05-01', '2022-06-01', 'INFERRED'],
    ['this May', '2023-05-01', '2023-06-01', 'INFERRED'],
    ['in May', '2023-05-01', '2023-06-01', 'INFERRED'],
    ['next May', '2024-05-01', '2024-06-01', 'INFERRED'],
    ['last April', '2023-04-01', '2023-05-01', 'INFERRED'],
    ['last June', '2022-06-01', '2022-07-01', 'INFERRED'],
    ['in June', '2023-06-01', '2023-07-01', 'INFERRED'],
    ['in November', '2023-11-01', '2023-12-01', 'INFERRED'],
    ['in December', '2022-12-01', '2023-01-01', 'INFERRED'],
    ['early March', '2023-03-01', '2023-04-01', 'INFERRED'],
  ];
  it.each(months)(
    'Given "%s" said in May 2023, When resolved, Then it is the month [%s, %s)',
    (expr, from, to, source) => expectResolved(expr, ANCHOR, from, to, source),
  );

  const absolute: Case[] = [
    ['3 March 2024', '2024-03-03', '2024-03-04', 'STATED'],
    ['March 3, 2024', '2024-03-03', '2024-03-04', 'STATED'],
    ['March 3rd 2024', '2024-03-03', '2024-03-04', 'STATED'],
    ['2024-03-03', '2024-03-03', '2024-03-04', 'STATED'],
    ['8 May, 2023', '2023-05-08', '2023-05-09', 'STATED'],
    ['the 1st of June 2021', '2021-06-01', '2021-06-02', 'STATED'],
    ['in 2022', '2022-01-01', '2023-01-01', 'STATED'],
    ['May 2023', '2023-05-01', '2023-06-01', 'STATED'],
    ['in Sept 2019', '2019-09-01', '2019-10-01', 'STATED'],
    ['29 February 2024', '2024-02-29', '2024-03-01', 'STATED'],
    ['on 3 March', '2023-03-03', '2023-03-04', 'INFERRED'],
  ];
  it.each(absolute)(
    'Given the absolute form "%s", When resolved, Then it is [%s, %s) and %s',
    (expr, from, to, source) => expectResolved(expr, ANCHOR, from, to, source),
  );

  it('Given an anchor in January, When "last month" / "last year" / "last week" are resolved, Then they cross into the previous year', () => {
    expectResolved('last month', '2024-01-15T09:00:00Z', '2023-12-01', '2024-01-01', 'INFERRED');
    expectResolved('last year', '2024-01-15T09:00:00Z', '2023-01-01', '2024-01-01', 'INFERRED');
    expectResolved('last week', '2024-01-03T09:00:00Z', '2023-12-25', '2024-01-01', 'INFERRED');
    expectResolved('yesterday', '2024-01-01T00:30:00Z', '2023-12-31', '2024-01-01', 'INFERRED');
  });

  it('Given leap years, When days and months around February are resolved, Then 29 February is respected', () => {
    expectResolved('yesterday', '2024-03-01T12:00:00Z', '2024-02-29', '2024-03-01', 'INFERRED');
    expectResolved('yesterday', '2023-03-01T12:00:00Z', '2023-02-28', '2023-03-01', 'INFERRED');
    expectResolved('1 month ago', '2024-03-31T12:00:00Z', '2024-02-01', '2024-03-01', 'INFERRED');
    expectResolved('a year ago', '2024-02-29T12:00:00Z', '2023-01-01', '2024-01-01', 'INFERRED');
    expectResolved('on 29 February', '2023-05-08T00:00:00Z', '2024-02-29', '2024-03-01', 'INFERRED');
  });

  it('Given an impossible date, When resolved, Then it is not a time expression at all', () => {
    expect(resolveTime('29 February 2023', ANCHOR).timeSource).toBe('DEFAULTED');
    expect(resolveTime('2023-02-30', ANCHOR).timeSource).toBe('DEFAULTED');
    expect(findTimeExpression('on 31 April 2023')).toBeNull();
  });

  it('Given month names without a year, When the anchor moves, Then the nearest occurrence is chosen', () => {
    expectResolved('in July', '2023-10-20T00:00:00Z', '2023-07-01', '2023-08-01', 'INFERRED');
    expectResolved('in January', '2023-12-20T00:00:00Z', '2024-01-01', '2024-02-01', 'INFERRED');
    expectResolved('in December', '2024-01-10T00:00:00Z', '2023-12-01', '2024-01-01', 'INFERRED');
    expectResolved('December 28', '2024-01-05T00:00:00Z', '2023-12-28', '2023-12-29', 'INFERRED');
  });

  it('Given a Sunday anchor, When "last weekend" is resolved, Then it is the previous ISO week\'s weekend', () => {
    expectResolved('last weekend', '2023-05-14T10:00:00Z', '2023-05-06', '2023-05-08', 'INFERRED');
  });

  it('Given a whole sentence, When resolved, Then its first time phrase is used', () => {
    expectResolved('We moved to Berlin last May, lol', ANCHOR, '2022-05-01', '2022-06-01', 'INFERRED');
  });

  it('Given an anchor that is not an instant, When resolved, Then BAD_USER_INPUT is thrown', () => {
    let caught: unknown;
    try {
      resolveTime('yesterday', 'not-a-date');
    } catch (e) {
      caught = e;
    }
    expect(isMuninnError(caught) && caught.code).toBe('BAD_USER_INPUT');
  });
});

describe('findTimeExpression', () => {
  it('Given a sentence, When searched, Then the first phrase is returned with exact offsets', () => {
    const text = 'payments-api moved to Kubernetes last May, lol';
    const hit = findTimeExpression(text);
    expect(hit).toEqual({ text: 'last May', start: 33, end: 41 });
    expect(text.slice(hit?.start, hit?.end)).toBe('last May');
  });

  it('Given overlapping candidates, When searched, Then the leftmost, longest phrase wins', () => {
    expect(findTimeExpression('we shipped in May 2023 and again last week')?.text).toBe('in May 2023');
    expect(findTimeExpression('Yesterday, not last week')?.text).toBe('Yesterday');
    expect(findTimeExpression('due March 3, 2024.')?.text).toBe('March 3, 2024');
  });

  it('Given the verb "may", When searched, Then it is not mistaken for the month', () => {
    expect(findTimeExpression('this may break the build')).toBeNull();
    expect(findTimeExpression('it may rain in may')).toBeNull();
    expect(findTimeExpression('I may go')).toBeNull();
  });

  it('Given no time phrase, When searched, Then null', () => {
    expect(findTimeExpression('Redis is fast. Version 3.5 shipped.')).toBeNull();
  });
});

describe('parseSessionDate', () => {
  it.each([
    ['1:56 pm on 8 May, 2023', '2023-05-08T13:56:00.000Z'],
    ['10:37 am on 27 June, 2023', '2023-06-27T10:37:00.000Z'],
    ['12:09 am on 13 August, 2023', '2023-08-13T00:09:00.000Z'],
    ['12:30 pm on 1 January, 2024', '2024-01-01T12:30:00.000Z'],
    ['7:05 PM on 29 February, 2024', '2024-02-29T19:05:00.000Z'],
    ['8 May 2023', '2023-05-08T00:00:00.000Z'],
  ])('Given the LoCoMo timestamp "%s", When parsed, Then it is %s (UTC)', (s, iso) => {
    expect(parseSessionDate(s)).toBe(iso);
  });

  it.each([
    '',
    'yesterday',
    '13:10 pm on 8 May, 2023',
    '1:56 pm on 29 February, 2023',
    '1:75 pm on 8 May, 2023',
  ])('Given the non-timestamp "%s", When parsed, Then null', (s) => {
    expect(parseSessionDate(s)).toBeNull();
  });
});

describe('canonicalText', () => {
  it('Given messy whitespace, invisible characters, smart quotes and dashes, When canonicalised, Then only the form changes', () => {
    expect(canonicalText('  \u201CHi\u201D\u200B  there\u2014ok \u2018x\u2019\n\tnow\u00A0 ')).toBe(
      '"Hi" there - ok \'x\' now',
    );
    expect(canonicalText('pay\u200Dments\u2013api')).toBe('payments-api');
  });

  it('Given emoji joined with ZWJ, When canonicalised, Then the sequence survives', () => {
    const family = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}';
    expect(canonicalText(` ${family} `)).toBe(family);
  });

  it('Given a secret ref, When canonicalised, Then it is untouched', () => {
    expect(canonicalText('token  [secret:github_token:ab12cd34] ')).toBe(
      'token [secret:github_token:ab12cd34]',
    );
  });
});
