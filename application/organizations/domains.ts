import { findRole } from '../../domain/organizations/roles';
import {
  type DomainEnrollment,
  parseDomainName,
  type VerifiedDomain,
  verificationRecordName,
  verificationRecordValue,
} from '../../domain/organizations/verified-domain';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry } from '../audit/audit-log';
import type { RequestOrigin } from '../ports/request-origin';
import { access, type AccessError, actsAsOwner, auditActorOf, beyondActor, type OrganizationActor, type OrganizationDeps, permissionBeyondActor } from './deps';

interface DomainInput {
  projectId: string;
  organizationId: string;
  actor: OrganizationActor;
}

/** The organization's domains (a member needs org:settings:manage). */
export function makeListDomains(deps: OrganizationDeps) {
  return async (input: DomainInput): Promise<Result<VerifiedDomain[], AccessError>> => {
    const a = await access(deps, input.projectId, input.organizationId, input.actor, 'org:settings:manage');
    if (!a.ok) return a;
    return ok(await deps.store.listDomains(a.value.org.id));
  };
}

/** Adds a domain to verify; answers it with the TXT record to publish (`_tollgate-verification.<domain>`). */
export function makeAddDomain(deps: OrganizationDeps) {
  return async (
    input: DomainInput & { domain: string; origin: RequestOrigin },
  ): Promise<Result<VerifiedDomain, AccessError | 'invalid_domain' | 'domain_exists'>> => {
    const a = await access(deps, input.projectId, input.organizationId, input.actor, 'org:settings:manage');
    if (!a.ok) return a;
    const name = parseDomainName(input.domain);
    if (!name.ok) return name;
    const domain: VerifiedDomain = {
      id: deps.crypto.uuid(),
      organizationId: a.value.org.id,
      projectId: input.projectId,
      domain: name.value,
      verificationToken: deps.crypto.randomToken(24),
      verifiedAt: null,
      enrollment: 'none',
      defaultRole: 'member',
      createdAt: deps.clock.now(),
    };
    if ((await deps.store.addDomain(domain)) === 'exists') return err('domain_exists');
    deps.audit.record(
      auditEntry(domain.createdAt, input.projectId, 'organization.domain.added', {
        actor: auditActorOf(input.actor),
        target: { kind: 'organization', id: domain.organizationId },
        origin: input.origin,
        details: { domain: domain.domain },
      }),
    );
    return ok(domain);
  };
}

/**
 * Looks the TXT record up and marks the domain verified when one of the records says
 * `tollgate-verification=<token>`. A domain is verified for one organization of a project at most.
 */
export function makeVerifyDomain(deps: OrganizationDeps) {
  return async (
    input: DomainInput & { domainId: string; origin: RequestOrigin },
  ): Promise<Result<VerifiedDomain, AccessError | 'domain_not_found' | 'domain_verification_failed' | 'domain_taken'>> => {
    const a = await access(deps, input.projectId, input.organizationId, input.actor, 'org:settings:manage');
    if (!a.ok) return a;
    const domain = await deps.store.findDomain(a.value.org.id, input.domainId);
    if (!domain) return err('domain_not_found');
    if (domain.verifiedAt) return ok(domain);
    const name = verificationRecordName(domain.domain);
    const expected = verificationRecordValue(domain.verificationToken);
    let records: string[];
    try {
      records = await deps.dns.txt(name);
    } catch {
      records = [];
    }
    if (!records.some((r) => r.trim() === expected)) {
      return err('domain_verification_failed', `No TXT record ${name} with the value ${expected} was found; DNS changes can take a while to show`);
    }
    const now = deps.clock.now();
    if ((await deps.store.markDomainVerified(domain.id, now)) === 'taken') return err('domain_taken');
    deps.audit.record(
      auditEntry(now, input.projectId, 'organization.domain.verified', {
        actor: auditActorOf(input.actor),
        target: { kind: 'organization', id: domain.organizationId },
        origin: input.origin,
        details: { domain: domain.domain },
      }),
    );
    return ok({ ...domain, verifiedAt: now });
  };
}

/**
 * What happens to users of the domain (nothing, a suggestion, automatic membership) and their role.
 * A default role of owner is for owners to set.
 */
export function makeUpdateDomain(deps: OrganizationDeps) {
  return async (
    input: DomainInput & { domainId: string; enrollment?: DomainEnrollment; defaultRole?: string; origin: RequestOrigin },
  ): Promise<Result<VerifiedDomain, AccessError | 'domain_not_found' | 'invalid_role' | 'owner_required'>> => {
    const a = await access(deps, input.projectId, input.organizationId, input.actor, 'org:settings:manage');
    if (!a.ok) return a;
    if (input.defaultRole !== undefined) {
      if (!findRole(a.value.roles, input.defaultRole)) return err('invalid_role');
      if (input.defaultRole === 'owner' && !actsAsOwner(a.value)) return err('owner_required');
      const beyond = permissionBeyondActor(a.value, input.defaultRole);
      if (beyond) return err('missing_permission', beyondActor(beyond));
    }
    const existing = await deps.store.findDomain(a.value.org.id, input.domainId);
    if (!existing) return err('domain_not_found');
    const updated = await deps.store.updateDomain(existing.id, {
      ...(input.enrollment !== undefined ? { enrollment: input.enrollment } : {}),
      ...(input.defaultRole !== undefined ? { defaultRole: input.defaultRole } : {}),
    });
    if (!updated) return err('domain_not_found');
    deps.audit.record(
      auditEntry(deps.clock.now(), input.projectId, 'organization.domain.updated', {
        actor: auditActorOf(input.actor),
        target: { kind: 'organization', id: existing.organizationId },
        origin: input.origin,
        details: { domain: updated.domain, enrollment: updated.enrollment, default_role: updated.defaultRole },
      }),
    );
    return ok(updated);
  };
}

/** Removes a domain (its users are no longer suggested or enrolled; members stay). */
export function makeRemoveDomain(deps: OrganizationDeps) {
  return async (input: DomainInput & { domainId: string; origin: RequestOrigin }): Promise<Result<void, AccessError | 'domain_not_found'>> => {
    const a = await access(deps, input.projectId, input.organizationId, input.actor, 'org:settings:manage');
    if (!a.ok) return a;
    const existing = await deps.store.findDomain(a.value.org.id, input.domainId);
    if (!existing || !(await deps.store.deleteDomain(a.value.org.id, existing.id))) return err('domain_not_found');
    deps.audit.record(
      auditEntry(deps.clock.now(), input.projectId, 'organization.domain.removed', {
        actor: auditActorOf(input.actor),
        target: { kind: 'organization', id: existing.organizationId },
        origin: input.origin,
        details: { domain: existing.domain },
      }),
    );
    return ok(undefined);
  };
}
