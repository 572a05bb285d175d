/** Time is a port so that expiry rules are tested by moving a clock, never by sleeping. */
export interface Clock {
  now(): Date;
}
