import { useState, type FormEvent } from 'react';
import { AdvanceSandboxBodySchema } from '../../../../../contract/admin';
import { api, errorMessage } from '../../api';
import { ErrorNote, useLoad, when } from '../../ui';
import { firstIssue } from './format';

/** A time in UTC to the minute: 2027-01-12 10:00 UTC (the sandbox's dates are compared with invoices, which name a day). */
const utcMinute = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** How far the sandbox is ahead of real time, in days (hours under a day). */
function ahead(seconds: number): string {
  if (seconds < 60) return 'the same as real time';
  const days = seconds / 86_400;
  if (days < 1) return `${Math.max(1, Math.round(seconds / 3600))} hour(s) ahead of real time`;
  const shown = Number.isInteger(Math.round(days * 10) / 10) ? String(Math.round(days)) : days.toFixed(1);
  return `${shown} day${shown === '1' ? '' : 's'} ahead of real time`;
}

export function SandboxClock(props: { projectId: string; onDone: (notice: string) => void }) {
  const [formError, setFormError] = useState<string | null>(null);
  const clock = useLoad(
    () => api.billing.sandboxClock({ params: { projectId: props.projectId } }),
    (b) => b,
    [props.projectId],
  );
  const advance = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const parsed = AdvanceSandboxBodySchema.safeParse({ days: Number(new FormData(e.currentTarget).get('days')) });
    if (!parsed.success) return setFormError(firstIssue(parsed));
    setFormError(null);
    const r = await api.billing.advanceSandbox({ params: { projectId: props.projectId }, body: parsed.data });
    if (r.status !== 200) return setFormError(errorMessage(r.body));
    await clock.reload();
    props.onDone(`Sandbox clock now ${when(r.body.now)}; ${r.body.changed} subscription(s) changed.`);
  };
  return (
    <form className="panel" onSubmit={advance} noValidate aria-labelledby="sandbox-clock">
      <h2 id="sandbox-clock">Sandbox clock</h2>
      <p data-testid="sandbox-time">
        {clock.data ? (
          <>
            Sandbox time: <time dateTime={clock.data.now}>{utcMinute(clock.data.now)}</time>, {ahead(clock.data.ahead_seconds)}.
          </>
        ) : clock.error ? null : (
          'Reading the sandbox time…'
        )}
      </p>
      <ErrorNote message={clock.error} onRetry={clock.reload} />
      <p className="muted">
        Move the sandbox's time forward: renewals, trial ends and scheduled cancellations that fall due are applied, and invoices are dated by the sandbox time.
      </p>
      <label htmlFor="advance-days">Days</label>
      <input id="advance-days" name="days" type="number" min={1} defaultValue={31} />
      <ErrorNote message={formError} />
      <button type="submit">Advance time</button>
    </form>
  );
}
