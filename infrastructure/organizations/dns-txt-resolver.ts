import { Resolver } from 'node:dns/promises';
import type { DnsTxtResolver } from '../../application/organizations/deps';

/**
 * TXT records through the system's DNS resolver (or the servers given), each record's strings
 * joined as DNS splits long values into 255-byte strings. A name that does not exist has none.
 */
export class SystemDnsTxtResolver implements DnsTxtResolver {
  private readonly resolver = new Resolver({ timeout: 5_000, tries: 2 });

  constructor(servers?: string[]) {
    if (servers && servers.length > 0) this.resolver.setServers(servers);
  }

  async txt(name: string): Promise<string[]> {
    try {
      return (await this.resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'NXDOMAIN') return [];
      throw e;
    }
  }
}
