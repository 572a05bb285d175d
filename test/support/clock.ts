import type { Clock } from '../../application/ports/clock';

/** A clock tests move by hand. */
export class TestClock implements Clock {
  private current: number;

  constructor(start: Date | number = Date.now()) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  advance(ms: number): void {
    this.current += ms;
  }

  advanceSeconds(s: number): void {
    this.advance(s * 1000);
  }

  set(date: Date): void {
    this.current = date.getTime();
  }
}
