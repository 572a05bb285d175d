import { resolveLocale } from '../../domain/locale';
import { deviceSummary } from '../../domain/security-notice';
import type { MailTransport } from '../mail/email-message';
import type { ProjectStore } from '../stores/project.store';
import type { UserStore } from '../stores/user.store';
import type { SecurityNotice, SecurityNoticeRenderer } from './security-notice';

export interface DeliverSecurityNoticeDeps {
  projects: Pick<ProjectStore, 'findById'>;
  users: Pick<UserStore, 'findById'>;
  renderer: SecurityNoticeRenderer;
  transport: MailTransport;
}

/**
 * The outbox handler of security notifications: finds the user's address and locale (the stored
 * preference, else the project's default), renders the notice and sends it. A user without an
 * email address, or gone, gets nothing. Idempotent by the message id (the SMTP Message-ID).
 */
export function makeDeliverSecurityNotice(deps: DeliverSecurityNoticeDeps) {
  return async (notice: SecurityNotice, messageId: string): Promise<void> => {
    const project = await deps.projects.findById(notice.projectId);
    if (!project) return;
    const user = await deps.users.findById(project.id, notice.userId);
    if (!user?.email) return;
    const rendered = deps.renderer.renderSecurityNotice({
      kind: notice.kind,
      locale: resolveLocale({ stored: user.locale, projectDefault: project.settings.defaultLocale }),
      projectName: project.name,
      occurredAt: new Date(notice.occurredAt),
      ip: notice.ip,
      device: deviceSummary(notice.userAgent),
      method: notice.method,
      organizationName: notice.organizationName,
      role: notice.role,
      passkeyName: notice.passkeyName,
    });
    await deps.transport.send({ ...rendered, messageId, to: user.email, secretPreview: '' });
  };
}
