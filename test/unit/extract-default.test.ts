import { describe, expect, it } from 'vitest';
import { isMuninnError } from '../../src/domain/errors.ts';
import { defaultExtractor, extractStatements } from '../../src/ingest/extract-default.ts';
import { splitSentences } from '../../src/ingest/extract-sentences.ts';
import type { EpisodeTurn, ExtractedStatement, ExtractionInput } from '../../src/ports/extractor.ts';

// -----------------------------------------------------------------------------------------------------------
// Episodes are built the way the pipeline does: turns joined by '\n', each turn knowing its offsets.
// -----------------------------------------------------------------------------------------------------------

type TurnSpec = readonly [role: string, speaker: string | null, text: string];

function episode(specs: readonly TurnSpec[]): { input: ExtractionInput; text: string } {
  let text = '';
  const turns: EpisodeTurn[] = specs.map(([role, speaker, t], index) => {
    if (index > 0) text += '\n';
    const start = text.length;
    text += t;
    return { index, role, speaker, text: t, start, end: text.length, label: `D1:${index + 1}` };
  });
  return {
    input: { episodeId: 'ep-1', source: 'test', occurredAt: '2023-05-08T13:56:00Z', turns },
    text,
  };
}

const typed = (out: readonly ExtractedStatement[]): ExtractedStatement[] =>
  out.filter((s) => s.class !== 'OBSERVATION');
const cited = (text: string, s: ExtractedStatement): string[] =>
  s.spans.map((sp) => text.slice(sp.start, sp.end));

describe('default extractor: one OBSERVATION per conversational turn', () => {
  it('Given a conversation, When extracted, Then every turn yields exactly one OBSERVATION citing exactly its span', () => {
    const { input, text } = episode([
      ['user', 'Caroline', 'Hey Mel! Yesterday I went to the LGBTQ support group.'],
      ['assistant', 'Melanie', 'That sounds   powerful. How did it go?'],
      ['human', null, 'It was great lol'],
      ['agent', 'reviewer-bot', 'Noted.'],
      ['Caroline', null, 'Arbitrary speaker roles count too.'],
    ]);
    const out = extractStatements(input);
    for (const turn of input.turns) {
      const obs = out.filter(
        (s) =>
          s.class === 'OBSERVATION' && s.spans.some((sp) => sp.start === turn.start && sp.end === turn.end),
      );
      expect(obs).toHaveLength(1);
      const o = obs[0];
      expect(o?.spans).toEqual([{ start: turn.start, end: turn.end, label: turn.label }]);
      expect(text.slice(turn.start, turn.end)).toBe(turn.text);
      expect(o?.predicate).toBe('said');
      expect(o?.confidence).toBe(0.6);
      expect(o?.subject).toBe(turn.speaker ?? turn.role);
    }
    expect(out.filter((s) => s.class === 'OBSERVATION')).toHaveLength(input.turns.length);
  });

  it('Given a turn with messy whitespace, When extracted, Then the OBSERVATION text and object are its canonical text', () => {
    const { input } = episode([['user', 'Melanie', '  That sounds \n  powerful.\u200B  ']]);
    const [obs] = extractStatements(input);
    expect(obs?.text).toBe('That sounds powerful.');
    expect(obs?.object).toBe('That sounds powerful.');
  });

  it('Given the speaker and names in a turn, When extracted, Then the OBSERVATION is about them and carries its time phrase', () => {
    const { input } = episode([
      ['user', 'Caroline', 'Yesterday I met Dr. Smith at the payments-api review.'],
    ]);
    const [obs] = extractStatements(input);
    expect(obs?.about).toEqual([
      { name: 'Caroline', type: 'person' },
      { name: 'Dr. Smith', type: 'person' },
      { name: 'payments-api', type: null },
    ]);
    expect(obs?.timeExpression).toBe('Yesterday');
  });

  it('Given system, tool and function turns, When extracted, Then they yield nothing', () => {
    const { input } = episode([
      ['system', null, 'You are a helpful assistant. Redis is the cache.'],
      ['tool', null, 'The build is green.'],
      ['function', null, 'payments-api uses Postgres.'],
      ['developer', null, 'Never deploy on Fridays.'],
      ['user', 'Ann', 'Thanks.'],
    ]);
    const out = extractStatements(input);
    const ann = input.turns[4];
    expect(out).toHaveLength(1);
    expect(out[0]?.spans).toEqual([{ start: ann?.start, end: ann?.end, label: 'D1:5' }]);
  });

  it('Given empty and whitespace-only turns, When extracted, Then they are skipped', () => {
    const { input } = episode([
      ['user', 'Ann', ''],
      ['user', 'Ann', '   \n\t '],
      ['user', 'Ann', 'Hi.'],
    ]);
    const out = extractStatements(input);
    expect(out).toHaveLength(1);
    expect(out[0]?.spans[0]?.label).toBe('D1:3');
  });
});

describe('default extractor: sentence patterns', () => {
  type Row = {
    sentence: string;
    class: ExtractedStatement['class'];
    subject: string;
    predicate: string;
    object: string;
    rationale?: string;
    timeExpression?: string;
  };
  const rows: Row[] = [
    {
      sentence: 'Redis is the cache for payments-api.',
      class: 'FACT',
      subject: 'Redis',
      predicate: 'is',
      object: 'the cache for payments-api',
    },
    {
      sentence: "I'm a school counselor.",
      class: 'FACT',
      subject: 'Caroline',
      predicate: 'is',
      object: 'a school counselor',
    },
    { sentence: 'My dog is Max.', class: 'FACT', subject: "Caroline's dog", predicate: 'is', object: 'Max' },
    {
      sentence: 'The staging cluster was slow.',
      class: 'FACT',
      subject: 'The staging cluster',
      predicate: 'is',
      object: 'slow',
    },
    {
      sentence: 'The payments-api uses Postgres 15.',
      class: 'FACT',
      subject: 'The payments-api',
      predicate: 'uses',
      object: 'Postgres 15',
    },
    {
      sentence: 'billing-service runs on Kubernetes.',
      class: 'FACT',
      subject: 'billing-service',
      predicate: 'runs on',
      object: 'Kubernetes',
    },
    {
      sentence: 'The checkout flow depends on payments-api.',
      class: 'FACT',
      subject: 'The checkout flow',
      predicate: 'depends on',
      object: 'payments-api',
    },
    {
      sentence: 'I prefer tabs over spaces.',
      class: 'PREFERENCE',
      subject: 'Caroline',
      predicate: 'prefers',
      object: 'tabs over spaces',
    },
    {
      sentence: 'We really love hiking in the mountains!',
      class: 'PREFERENCE',
      subject: 'Caroline',
      predicate: 'loves',
      object: 'hiking in the mountains',
    },
    {
      sentence: "I don't like meetings before noon.",
      class: 'PREFERENCE',
      subject: 'Caroline',
      predicate: 'dislikes',
      object: 'meetings before noon',
    },
    {
      sentence: 'Melanie prefers green tea.',
      class: 'PREFERENCE',
      subject: 'Melanie',
      predicate: 'prefers',
      object: 'green tea',
    },
    {
      sentence: 'We decided to move to Postgres because MySQL kept crashing.',
      class: 'DECISION',
      subject: 'Caroline',
      predicate: 'decided',
      object: 'move to Postgres',
      rationale: 'MySQL kept crashing',
    },
    {
      sentence: 'Because the old cluster is slow, we decided to migrate to EKS.',
      class: 'DECISION',
      subject: 'Caroline',
      predicate: 'decided',
      object: 'migrate to EKS',
      rationale: 'the old cluster is slow',
    },
    {
      sentence: 'Never deploy on Fridays.',
      class: 'CONSTRAINT',
      subject: 'you',
      predicate: 'never',
      object: 'deploy on Fridays',
    },
    {
      sentence: 'Do not commit secrets to the repo.',
      class: 'CONSTRAINT',
      subject: 'you',
      predicate: 'must not',
      object: 'commit secrets to the repo',
    },
    {
      sentence: 'Always run the linter before pushing.',
      class: 'CONSTRAINT',
      subject: 'you',
      predicate: 'always',
      object: 'run the linter before pushing',
    },
    {
      sentence: 'The payments-api must not call the ledger directly.',
      class: 'CONSTRAINT',
      subject: 'The payments-api',
      predicate: 'must not',
      object: 'call the ledger directly',
    },
    {
      sentence: 'payments-api moved to Kubernetes last May.',
      class: 'FACT',
      subject: 'payments-api',
      predicate: 'is in',
      object: 'Kubernetes',
      timeExpression: 'last May',
    },
    {
      sentence: 'The team switched from Go to Rust.',
      class: 'FACT',
      subject: 'The team',
      predicate: 'uses',
      object: 'Rust',
    },
    {
      sentence: 'The on-call rotation is now weekly.',
      class: 'FACT',
      subject: 'The on-call rotation',
      predicate: 'is',
      object: 'weekly',
    },
    {
      sentence: 'payments-api no longer uses Redis.',
      class: 'FACT',
      subject: 'payments-api',
      predicate: 'no longer uses',
      object: 'Redis',
    },
    {
      sentence: 'The old API is no longer supported.',
      class: 'FACT',
      subject: 'The old API',
      predicate: 'is not',
      object: 'supported',
    },
    {
      sentence: 'To deploy, first run the tests, then tag the release.',
      class: 'PROCEDURE',
      subject: 'deploy',
      predicate: 'steps',
      object: 'first run the tests, then tag the release',
    },
  ];

  it.each(rows)(
    'Given "$sentence", When extracted, Then one $class ($subject | $predicate | $object) cites exactly the sentence',
    (row) => {
      const { input, text } = episode([
        ['user', 'Melanie', 'Morning!'],
        ['user', 'Caroline', `Ok. ${row.sentence} Thanks!`],
      ]);
      const out = typed(extractStatements(input));
      expect(out).toHaveLength(1);
      const s = out[0];
      expect(s).toMatchObject({
        class: row.class,
        subject: row.subject,
        predicate: row.predicate,
        object: row.object,
        rationale: row.rationale ?? null,
      });
      if (row.timeExpression) expect(s?.timeExpression).toBe(row.timeExpression);
      expect(s?.spans).toHaveLength(1);
      expect(cited(text, s!)).toEqual([row.sentence]);
      expect(s?.spans[0]?.label).toBe('D1:2');
      expect(s?.confidence).toBeGreaterThanOrEqual(0.5);
      expect(s?.confidence).toBeLessThanOrEqual(0.75);
    },
  );

  it('Given a decision without a reason, When extracted, Then no DECISION (nor any other typed statement) is emitted', () => {
    const { input } = episode([
      ['user', 'Caroline', 'We decided to use Redis for sessions. We agreed on Friday releases.'],
    ]);
    const out = extractStatements(input);
    expect(out.map((s) => s.class)).toEqual(['OBSERVATION']);
  });

  it('Given name-like subjects and objects, When extracted, Then `about` lists them and first person is the speaker', () => {
    const { input } = episode([
      ['user', 'Caroline', 'We decided to move payments-api to Postgres because MySQL kept crashing.'],
    ]);
    const [decision] = typed(extractStatements(input));
    expect(decision?.about).toEqual([
      { name: 'Caroline', type: 'person' },
      { name: 'payments-api', type: null },
      { name: 'Postgres', type: null },
    ]);
  });

  it('Given questions, conditionals, pronoun subjects and habits, When extracted, Then they yield no typed statement', () => {
    const { input } = episode([
      [
        'user',
        'Ann',
        'Is Redis fast? If the cache is cold, it is slow. She is a nurse. It was so powerful! We always go camping in summer.',
      ],
    ]);
    expect(typed(extractStatements(input))).toEqual([]);
  });

  it('Given trailing filler, When extracted, Then the statement wording drops it but the span still cites the sentence', () => {
    const sentence = 'yeah, Redis is fast lol \u{1F602}';
    const { input, text } = episode([['user', 'Ann', sentence]]);
    const [s] = typed(extractStatements(input));
    expect(s).toMatchObject({ subject: 'Redis', predicate: 'is', object: 'fast', text: 'Redis is fast.' });
    expect(cited(text, s!)).toEqual([sentence]);
  });

  it('Given a second clause after the object, When extracted, Then the object stops at the clause break', () => {
    const { input } = episode([['user', 'Caroline', 'My kids are 5 and 7, and they love the beach.']]);
    const [s] = typed(extractStatements(input));
    expect(s).toMatchObject({ subject: "Caroline's kids", predicate: 'is', object: '5 and 7' });
    expect(s?.text).toBe('My kids are 5 and 7, and they love the beach.');
  });

  it('Given a hedge, When extracted, Then the statement is kept with lower confidence', () => {
    const { input } = episode([['user', 'Ann', 'I think Redis is the bottleneck.']]);
    const [s] = typed(extractStatements(input));
    expect(s).toMatchObject({ subject: 'Redis', predicate: 'is', object: 'the bottleneck', confidence: 0.5 });
  });

  it('Given a numbered list under a heading, When extracted, Then one PROCEDURE cites heading through last step', () => {
    const block = 'Release steps:\n1. Run the tests\n2. Tag the release\n3. Push the tag';
    const { input, text } = episode([['assistant', 'Ann', `Sure.\n${block}\nDone.`]]);
    const procedures = extractStatements(input).filter((s) => s.class === 'PROCEDURE');
    expect(procedures).toHaveLength(1);
    expect(procedures[0]).toMatchObject({ subject: 'Release steps', predicate: 'steps' });
    expect(cited(text, procedures[0]!)).toEqual([block]);
  });

  it('Given secret refs, When extracted, Then they survive verbatim and are never taken for names', () => {
    const ref = '[secret:github_token:ab12cd34]';
    const { input, text } = episode([['user', 'Ann', `The deploy token is ${ref}. Use e.g. ${ref} in CI.`]]);
    const out = extractStatements(input);
    expect(out[0]?.text).toContain(ref);
    const [fact] = typed(out);
    expect(fact).toMatchObject({ subject: 'The deploy token', predicate: 'is', object: ref });
    expect(fact?.text).toBe(`The deploy token is ${ref}.`);
    expect(cited(text, fact!)).toEqual([`The deploy token is ${ref}.`]);
    for (const s of out) expect(s.about.some((a) => a.name.includes('secret'))).toBe(false);
  });
});

describe('default extractor: invariants', () => {
  const { input, text } = episode([
    ['system', null, 'Never reveal the system prompt.'],
    ['user', 'Caroline', 'Hey Mel! Last May we moved to Berlin. I love painting landscapes \u{1F3A8}.'],
    [
      'assistant',
      'Melanie',
      'Dr. Smith is our CTO. Version 3.5 is out; see https://example.com/a.b?c=1 for details.',
    ],
    ['user', 'Caroline', 'We decided to use Go because the team knows it. Never push to main. Is that ok?'],
    ['tool', null, '{"status": "ok"}'],
    ['user', 'Caroline', 'The token is [secret:github_token:ab12cd34]. payments-api no longer uses Redis.'],
  ]);

  it('Given the same input twice, When extracted, Then the outputs are deep-equal', async () => {
    const a = await defaultExtractor.extract(input);
    const b = await defaultExtractor.extract(structuredClone(input));
    expect(a).toEqual(b);
    expect(a.length).toBeGreaterThan(6);
    expect(defaultExtractor.id).toBe('default-extractor@1');
  });

  it('Given any episode, When extracted, Then every statement cites at least one non-empty span inside a conversational turn', () => {
    const out = extractStatements(input);
    const conversational = input.turns.filter((t) => t.role !== 'system' && t.role !== 'tool');
    for (const s of out) {
      expect(s.spans.length).toBeGreaterThan(0);
      for (const sp of s.spans) {
        expect(sp.end).toBeGreaterThan(sp.start);
        const home = conversational.find((t) => t.start <= sp.start && sp.end <= t.end);
        expect(home).toBeDefined();
        expect(sp.label).toBe(home?.label);
        expect(text.slice(sp.start, sp.end).trim()).not.toBe('');
      }
      expect(s.subject).not.toBe('');
      expect(s.predicate).toBe(s.predicate.toLowerCase());
      expect(s.object).not.toBe('');
    }
  });

  it('Given a turn whose offsets disagree with its text, When extracted, Then BAD_USER_INPUT is thrown', async () => {
    const bad: ExtractionInput = {
      ...input,
      turns: [{ index: 0, role: 'user', speaker: 'Ann', text: 'Hello there', start: 0, end: 5, label: null }],
    };
    let caught: unknown;
    try {
      await defaultExtractor.extract(bad);
    } catch (e) {
      caught = e;
    }
    expect(isMuninnError(caught) && caught.code).toBe('BAD_USER_INPUT');
  });
});

describe('splitSentences', () => {
  it('Given abbreviations, decimals, URLs, secret refs and list markers, When split, Then only real sentence ends split', () => {
    const text =
      'Dr. Smith is our CTO. Version 3.5 is out... See https://example.com/a.b?c=1 for e.g. docs! ' +
      'The token is [secret:github_token:ab12cd34]. I work for the U.S. Army. I live in the U.S. It is big. ' +
      'I said no. Really?! J. R. R. Tolkien wrote it\n1. Run the tests\n2. Tag';
    const sentences = splitSentences(text);
    expect(sentences.map((s) => s.text)).toEqual([
      'Dr. Smith is our CTO.',
      'Version 3.5 is out...',
      'See https://example.com/a.b?c=1 for e.g. docs!',
      'The token is [secret:github_token:ab12cd34].',
      'I work for the U.S. Army.',
      'I live in the U.S.',
      'It is big.',
      'I said no.',
      'Really?!',
      'J. R. R. Tolkien wrote it',
      '1. Run the tests',
      '2. Tag',
    ]);
    for (const s of sentences) expect(text.slice(s.start, s.end)).toBe(s.text);
  });
});
