import { Migration } from '@mikro-orm/migrations';

export class Migration20261122020000OAuth extends Migration {
  override async up(): Promise<void> {
    // Tables of the OAuth feature are added here.
  }
}
