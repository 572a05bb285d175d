import type { Project } from '../../domain/project';
import { deviceFingerprintSource, isNoticeEnabled } from '../../domain/security-notice';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { RequestOrigin } from '../ports/request-origin';
import { isSystemOrigin, type NotifySecurityEvent } from './security-notice';

/** What a device's first sign-in for a user is: the user's first device ever, a device seen before, or a new one. */
export type DeviceSighting = 'first' | 'known' | 'new';

/** The devices an end user signed in from (hashed fingerprints, domain/security-notice.ts). */
export interface KnownDeviceStore {
  /**
   * Remembers `fingerprint` for the user (or marks it seen again) in one statement, and tells
   * whether the user had no device before (`first`), had this one (`known`) or had others (`new`).
   */
  remember(projectId: string, userId: string, fingerprint: string, at: Date): Promise<DeviceSighting>;
}

/** Called when a sign-in issues a session: true when it came from a device new to the user (and the user is told). */
export type CheckNewDevice = (input: { project: Project; userId: string; origin: RequestOrigin }) => Promise<boolean>;

/**
 * The new-device notice, for projects that turned it on: the sign-in's device is remembered, and a
 * device the user never signed in from, when the user had signed in before, sends the notice.
 * The user's first device is remembered silently. Projects with the notice off remember nothing
 * (no cost on their sign-ins); devices are learned from the first sign-in after it is turned on.
 */
export function makeCheckNewDevice(deps: {
  devices: KnownDeviceStore;
  notify: NotifySecurityEvent;
  crypto: Pick<TokenCrypto, 'hash'>;
  clock: Clock;
}): CheckNewDevice {
  return async ({ project, userId, origin }) => {
    if (!isNoticeEnabled(project.settings, 'new_device') || isSystemOrigin(origin)) return false;
    const fingerprint = deps.crypto.hash(deviceFingerprintSource(origin.ip, origin.userAgent));
    const seen = await deps.devices.remember(project.id, userId, fingerprint, deps.clock.now());
    if (seen !== 'new') return false;
    await deps.notify({ project, userId, kind: 'new_device', origin });
    return true;
  };
}
