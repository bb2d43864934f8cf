/** A partition the projector cannot move past: the batch it keeps failing on, since when, and why. */
export interface ProjectionStall {
  readonly partition: number;
  /** The failing batch's first and last offsets, `first..last`. */
  readonly offsets: string;
  readonly since: Date;
  readonly attempts: number;
  /** The failure's own message (Muninn's errors name no secret; a cause's text is not repeated here). */
  readonly error: string;
}

/** What this process knows of its projector: running and moving (`healthy`), and what it is stuck on. */
export interface ProjectionHealth {
  readonly healthy: boolean;
  readonly stalled: readonly ProjectionStall[];
}
