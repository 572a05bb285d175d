import { useState } from 'react';
import type { z } from 'zod';
import type { AdminOrganizationDetailSchema, OrganizationSettingsSchema } from '../../../../../contract/admin';
import type { RoleSchema, ServerOrganizationSchema } from '../../../../../contract/organizations.contract';
import { Link } from '../../ui';

export type Organization = z.infer<typeof ServerOrganizationSchema>;
export type OrganizationDetail = z.infer<typeof AdminOrganizationDetailSchema>;
export type Member = OrganizationDetail['members'][number];
export type Invitation = OrganizationDetail['invitations'][number];
export type Role = z.infer<typeof RoleSchema>;
export type OrganizationSettings = z.infer<typeof OrganizationSettingsSchema>;

/** The two views of the project's organizations: the organizations themselves, and the roles and settings they share. */
export function OrganizationTabs(props: { projectId: string; current: 'list' | 'roles' }) {
  const base = `/projects/${props.projectId}`;
  return (
    <nav aria-label="Organizations" className="tabs">
      <Link to={`${base}/organizations`} current={props.current === 'list'}>
        Organizations
      </Link>
      <Link to={`${base}/organization-settings`} current={props.current === 'roles'}>
        Roles &amp; settings
      </Link>
    </nav>
  );
}

/** Two-step action: the button, then "Yes, …" and Cancel, announced as a group (as on the Members page). */
export function Confirm(props: { label: string; question: string; yes: string; onYes: () => void }) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" className="secondary small" aria-label={props.label} onClick={() => setAsking(true)}>
        {props.yes.replace(/^Yes, /, '').replace(/^./, (c) => c.toUpperCase())}
      </button>
    );
  return (
    <span role="group" aria-label={`${props.label}?`}>
      {props.question}{' '}
      <button
        type="button"
        className="danger small"
        onClick={() => {
          setAsking(false);
          props.onYes();
        }}
      >
        {props.yes}
      </button>{' '}
      <button type="button" className="secondary small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** Permissions as typed: separated by commas or new lines, blanks dropped (the server checks each one). */
export const parsePermissions = (text: string): string[] =>
  text
    .split(/[,\n]/)
    .map((p) => p.trim())
    .filter(Boolean);

/** A role's name for a key ("Admin"), or the key itself for a role the project has since deleted. */
export const roleName = (roles: Role[] | null | undefined, key: string) => roles?.find((r) => r.key === key)?.name ?? key;

/** A JSON object as indented text. */
export const formatJson = (value: unknown) => JSON.stringify(value, null, 2);
