import type { BillingSubject } from '../../domain/billing/subject';
import type { SubjectPlanRead } from './usage.store';

/** How long a subject's terms serve as a hint, and how many subjects this process remembers. */
const HINT_MS = 60_000;
const HINT_SUBJECTS = 20_000;

export interface TermsHint {
  plan: SubjectPlanRead | null;
  /** The digest of the terms as read (the quiet write checks the database still has them). */
  version: string;
}

/**
 * The terms a subject's last consumption was decided on, per process, so that the next one can be
 * decided without reading first. Only a hint: the one-statement write compares the digest with the
 * subscription and plan as they are and writes nothing when they changed (the call then reads and
 * decides again), so a stale hint costs a round trip, never a wrong answer.
 */
export class TermsHints {
  private readonly hints = new Map<string, TermsHint & { at: number }>();

  get(projectId: string, subject: BillingSubject, now: Date): TermsHint | undefined {
    const hint = this.hints.get(keyOf(projectId, subject));
    return hint !== undefined && now.getTime() - hint.at < HINT_MS && hint.at <= now.getTime() ? hint : undefined;
  }

  remember(projectId: string, subject: BillingSubject, hint: TermsHint, now: Date): void {
    const key = keyOf(projectId, subject);
    this.hints.delete(key);
    if (this.hints.size >= HINT_SUBJECTS) this.hints.delete(this.hints.keys().next().value!);
    this.hints.set(key, { ...hint, at: now.getTime() });
  }

  forget(projectId: string, subject: BillingSubject): void {
    this.hints.delete(keyOf(projectId, subject));
  }
}

const keyOf = (projectId: string, subject: BillingSubject) => `${projectId}/${subject.kind}/${subject.id}`;
