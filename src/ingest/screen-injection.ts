/** Instruction-shaped text: a table of rules, run on the skeleton of the redacted text. */
import type { InjectionFinding, InjectionKind } from './screen-kinds.ts';

const W = '\\s{1,16}'; // bounded whitespace between words

interface InjectionRule {
  kind: InjectionKind;
  re: RegExp;
  /** `firstStrikeOpen` is the index of the first `<s>` in the text (-1 if none), computed once per call. */
  accept?: (m: RegExpExecArray, firstStrikeOpen: number) => boolean;
}

const INJECTION_RULES: readonly InjectionRule[] = [
  // --- role markers ---
  {
    kind: 'role_marker',
    re: /<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|begin_of_text|start_header_id|end_header_id|eot_id|eom_id|ipython)\|>/g,
  },
  { kind: 'role_marker', re: /\[\/?INST\]|<<\/?SYS>>/g },
  {
    kind: 'role_marker',
    re: /^[ \t]*#{1,6}[ \t]*(?:system|instructions?|assistant|user|human|response)[ \t]*:/gim,
  },
  { kind: 'role_marker', re: /^[ \t]*(?:SYSTEM|Human|Assistant)[ \t]*:/gm },
  { kind: 'role_marker', re: /<\/?system(?:[_-][a-z]{1,20})?>/gi },
  // `</s>` is also HTML strikethrough: only a role marker when no `<s>` opens it.
  { kind: 'role_marker', re: /<\/s>/g, accept: (m, open) => open === -1 || open > m.index },

  // --- override instructions ---
  {
    kind: 'override_instruction',
    re: new RegExp(
      `\\b(?:ignore|disregard|forget|override|skip|discard)${W}(?:(?:all|any|each)${W})?(?:of${W})?(?:(?:the|your|my|these|those)${W})?(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system)${W}(?:instructions?|prompts?|directions?|directives?|rules|guidelines|commands?|messages?|context)\\b`,
      'gi',
    ),
  },
  {
    kind: 'override_instruction',
    re: new RegExp(
      `\\b(?:ignore|disregard|forget)${W}(?:(?:all|any)${W})?(?:of${W})?(?:your|all)${W}(?:instructions|rules|guidelines|programming|system${W}prompt)\\b`,
      'gi',
    ),
  },
  { kind: 'override_instruction', re: new RegExp(`\\bforget${W}(?:about${W})?everything\\b`, 'gi') },
  {
    kind: 'override_instruction',
    re: new RegExp(
      `\\byou${W}are${W}now${W}(?:no${W}longer\\b|(?:(?:a|an|the|my)${W})?(?:[\\w-]{1,20}${W}){0,3}?(?:AI|assistant|model|chatbot|bot|persona|character|DAN|jailbroken|unrestricted|unfiltered|uncensored|in${W}(?:developer|god|DAN|jailbreak|admin)${W}mode)\\b)`,
      'gi',
    ),
  },
  {
    kind: 'override_instruction',
    re: new RegExp(`\\bfrom${W}now${W}on,?${W}you${W}(?:are|will|must)\\b`, 'gi'),
  },
  {
    kind: 'override_instruction',
    re: new RegExp(`\\b(?:new|updated|revised|real)${W}(?:system${W})?instructions?[ \\t]*:`, 'gi'),
  },

  // --- tool-call syntax ---
  {
    kind: 'tool_call_syntax',
    re: /<\/?(?:tool_calls?|function_calls?|tool_use|tool_result|function_results?)\b[^<>]{0,200}>/gi,
  },
  {
    kind: 'tool_call_syntax',
    re: /<(?:[a-z]{1,16}:)?invoke\s{1,8}name\s*=|<\|(?:python_tag|tool_call)\|>/gi,
  },
  { kind: 'tool_call_syntax', re: /"(?:function_call|tool_calls)"\s{0,8}:/g },
  {
    kind: 'tool_call_syntax',
    re: /\{\s{0,16}"(?:(?:tool|tool_name|function)"\s{0,8}:\s{0,8}"[^"\r\n]{1,128}"\s{0,8},\s{0,16}"(?:arguments|args|parameters|input|tool_input)|name"\s{0,8}:\s{0,8}"[^"\r\n]{1,128}"\s{0,8},\s{0,16}"arguments)"\s{0,8}:/g,
  },

  // --- system prompt probes ---
  {
    kind: 'system_prompt_probe',
    re: new RegExp(
      `\\b(?:reveal|print|show|output|repeat|display|dump|leak|recite|share|tell${W}me|give${W}me|what${W}(?:is|are|was|were))${W}(?:me${W})?(?:all${W})?your${W}(?:(?:full|entire|exact|original|initial|hidden|secret|complete)${W})?(?:system${W}(?:prompt|message|instructions?)|(?:initial|original|hidden|secret)${W}(?:instructions|prompt))\\b`,
      'gi',
    ),
  },
  {
    kind: 'system_prompt_probe',
    re: new RegExp(
      `\\b(?:reveal|leak|dump|print|output|repeat)${W}the${W}(?:(?:full|entire|hidden|exact)${W})?system${W}prompt\\b`,
      'gi',
    ),
  },
  {
    kind: 'system_prompt_probe',
    re: new RegExp(
      `\\brepeat${W}(?:all${W})?(?:of${W})?(?:the${W})?(?:words|text|everything)${W}(?:above|before)\\b`,
      'gi',
    ),
  },
];

export function detectInjection(text: string): InjectionFinding[] {
  const raw: InjectionFinding[] = [];
  const firstStrikeOpen = text.indexOf('<s>');
  for (const rule of INJECTION_RULES) {
    for (const m of text.matchAll(rule.re)) {
      if (rule.accept && !rule.accept(m, firstStrikeOpen)) continue;
      // Line-anchored markers may include leading indentation; report from the first visible char.
      const lead = m[0].length - m[0].trimStart().length;
      const start = m.index + lead;
      const end = m.index + m[0].length;
      raw.push({ kind: rule.kind, start, end, excerpt: text.slice(start, Math.min(end, start + 120)) });
    }
  }
  // Several rules of one kind may hit the same words: keep the first of each overlapping same-kind run.
  raw.sort((a, b) => a.kind.localeCompare(b.kind) || a.start - b.start || b.end - a.end);
  const found: InjectionFinding[] = [];
  let prev: InjectionFinding | undefined;
  for (const f of raw) {
    if (prev && prev.kind === f.kind && f.start < prev.end) continue;
    found.push(f);
    prev = f;
  }
  return found.sort((a, b) => a.start - b.start || a.end - b.end);
}
