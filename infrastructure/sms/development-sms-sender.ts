import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../application/ports/logger';
import type { Clock } from '../../application/ports/clock';
import type { SmsMessage, SmsSender } from '../../application/mfa/ports';

/**
 * Development only (never used in production): instead of sending, writes each message, code
 * included, to the log and to `<dataDir>/sms/<time>-<number>.txt`, so flows can be tried locally.
 */
export class DevelopmentSmsSender implements SmsSender {
  constructor(
    private readonly dataDir: string,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  async send(message: SmsMessage): Promise<void> {
    const dir = path.resolve(this.dataDir, 'sms');
    await mkdir(dir, { recursive: true });
    const stamp = this.clock.now().toISOString().replace(/[:.]/g, '-');
    const file = path.join(dir, `${stamp}-${message.to.replace(/[^\d+]/g, '')}.txt`);
    await writeFile(file, `To: ${message.to}\n\n${message.body}\n`, { mode: 0o600 });
    this.logger.info({ to: message.to, file }, `[development SMS] to ${message.to}: ${message.body}`);
  }
}
