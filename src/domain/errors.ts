/**
 * The one error map. Every failure that crosses a module boundary is a MuninnError with a stable code;
 * the API puts `code` on the wire as `extensions.code` and masks everything else.
 */
export const ErrorCodes = [
  'BAD_USER_INPUT',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'RATE_LIMITED',
  'UNAVAILABLE',
  'INTERNAL',
] as const;
export type ErrorCode = (typeof ErrorCodes)[number];

const RETRYABLE: Record<ErrorCode, boolean> = {
  BAD_USER_INPUT: false,
  UNAUTHENTICATED: false,
  FORBIDDEN: false,
  NOT_FOUND: false,
  CONFLICT: false,
  RATE_LIMITED: true,
  UNAVAILABLE: true,
  INTERNAL: false,
};

export type ErrorDetails = Readonly<Record<string, string | number | boolean | null | readonly string[]>>;

export class MuninnError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  /** Safe to show to the caller: never contains internals or other tenants' data. */
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MuninnError';
    this.code = code;
    this.retryable = RETRYABLE[code];
    this.details = details;
  }
}

export const badInput = (message: string, details?: ErrorDetails): MuninnError =>
  new MuninnError('BAD_USER_INPUT', message, details);
export const unauthenticated = (message = 'authentication required'): MuninnError =>
  new MuninnError('UNAUTHENTICATED', message);
export const forbidden = (message: string, details?: ErrorDetails): MuninnError =>
  new MuninnError('FORBIDDEN', message, details);
export const notFound = (message: string): MuninnError => new MuninnError('NOT_FOUND', message);
export const conflict = (message: string, details?: ErrorDetails): MuninnError =>
  new MuninnError('CONFLICT', message, details);
export const unavailable = (message: string, cause?: unknown): MuninnError =>
  new MuninnError('UNAVAILABLE', message, {}, { cause });

export const isMuninnError = (e: unknown): e is MuninnError => e instanceof MuninnError;
