export type { Policy, ReadScope } from '../domain/policy.ts';
