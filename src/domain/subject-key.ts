/**
 * How a record is found by its subject: trimmed and lower-case. The graph indexes it (`subjectKey`,
 * cypher/migrations/005), relate asks for candidates by it, and the write path holds a subject by it
 * while a statement about it is decided (ingest/subject-gate.ts): all three must agree.
 */
export const subjectKeyOf = (subject: string): string => subject.trim().toLowerCase();
