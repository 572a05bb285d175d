import { isCallbackUrlRegistered, isProviderEnabled, type Project } from '../project';
import type { OAuthProvider } from '../providers';

export type InitiationRefusal = 'project_inactive' | 'callback_url_not_registered' | 'provider_not_enabled';

/**
 * The project-level checks of an OAuth initiation, in the spec's order: inactive project (404),
 * callback URL not registered (403, exact string match), provider toggled off (403).
 */
export function initiationRefusal(project: Project, provider: OAuthProvider, callbackUrl: string): InitiationRefusal | null {
  if (!project.active) return 'project_inactive';
  if (!isCallbackUrlRegistered(project, callbackUrl)) return 'callback_url_not_registered';
  if (!isProviderEnabled(project, provider)) return 'provider_not_enabled';
  return null;
}
