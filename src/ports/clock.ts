/** Time and ids enter use cases only through these, so decisions stay testable and replay never reads them. */
export interface Clock {
  now(): Date;
}
export interface IdSource {
  uuid(): string;
}
export const systemClock: Clock = { now: () => new Date() };
