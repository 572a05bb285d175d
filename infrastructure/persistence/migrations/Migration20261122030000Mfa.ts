import { Migration } from '@mikro-orm/migrations';

export class Migration20261122030000Mfa extends Migration {
  override async up(): Promise<void> {
    // Tables of the Mfa feature are added here.
  }
}
